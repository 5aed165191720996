import { Schema } from "effect"
import type * as E from "../../domain/Errors.js"
import * as P from "../Problem.js"
import { html, type Html, htmlResponse, layout } from "./Html.js"

/** The use-case failures pages can meet. */
export type PageError =
  | E.InvalidInput
  | E.Unauthenticated
  | E.Forbidden
  | E.NotFound
  | E.AlreadyListed
  | E.HostRefused
  | E.RateLimited
  | E.HostUnavailable
  | E.MailUnavailable
  | E.NotConfigured
  | E.SearchUnavailable

/**
 * A use-case failure as the same RFC 9457 problem the JSON API answers (status, title, code, detail, field
 * errors), so a page and an agent read one story.
 */
export const problemOf = (error: PageError): P.ProblemJson => {
  switch (error._tag) {
    case "InvalidInput": return Schema.encodeSync(P.InvalidInput)(error)
    case "Unauthenticated": return Schema.encodeSync(P.Unauthenticated)(error)
    case "Forbidden": return Schema.encodeSync(P.Forbidden)(error)
    case "NotFound": return Schema.encodeSync(P.NotFound)(error)
    case "AlreadyListed": return Schema.encodeSync(P.AlreadyListed)(error)
    case "HostRefused": return Schema.encodeSync(P.HostRefused)(error)
    case "RateLimited": return Schema.encodeSync(P.RateLimited)(error)
    case "HostUnavailable": return Schema.encodeSync(P.HostUnavailable)(error)
    case "MailUnavailable": return Schema.encodeSync(P.MailUnavailable)(error)
    case "NotConfigured": return Schema.encodeSync(P.NotConfigured)(error)
    case "SearchUnavailable": return Schema.encodeSync(P.SearchUnavailable)(error)
  }
}

/** `Retry-After` for a problem that carries one. */
export const retryHeaders = (problem: P.ProblemJson): Record<string, string> =>
  problem.retry_after_seconds === undefined ? {} : { "retry-after": String(problem.retry_after_seconds) }

/** A problem as a notice box: title, detail and each invalid field. */
export const problemBox = (problem: P.ProblemJson): Html => html`<div class="notice error" role="alert" data-code="${problem.code}">
<strong>${problem.title}</strong><p>${problem.detail}</p>${
  problem.errors !== undefined && problem.errors.length > 0
    ? html`<ul class="errors">${problem.errors.map((e) => html`<li><code>${e.field}</code>: ${e.message}</li>`)}</ul>`
    : ""
}</div>`

/** A whole page for a problem (404 repo, expired link, 503 code host), with the problem's status. */
export const problemPage = (problem: P.ProblemJson, next: Html = html`<p><a href="/signin">Sign in</a> to manage your listings.</p>`) =>
  htmlResponse(
    layout({ title: problem.title, main: html`<h1>${problem.title}</h1>${problemBox(problem)}${next}` }),
    { status: problem.status, headers: retryHeaders(problem) }
  )

/** Something failed on our side: no detail beyond that, never a trace. */
export const internalErrorPage = () =>
  problemPage(
    P.problemBody(500, "internal_error", "Internal error", "Something went wrong on our side; nothing was changed by this request."),
    html`<p>Try again in a moment.</p>`
  )

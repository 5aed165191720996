import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import type { Principal } from "../../domain/Credentials.js"
import { HOST_CONNECTION_TTL_MS, HostConnection, type PendingConnection } from "../../domain/usecases/HostConnection.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { problemResponse } from "../Guard.js"
import { problemBody, type ProblemJson } from "../Problem.js"
import { type PageError, problemOf, problemPage, retryHeaders } from "./ErrorPage.js"
import { html, htmlResponse, layout } from "./Html.js"
import { prefersHtml } from "./Negotiation.js"
import { PageSessions, readForm } from "./Session.js"
import { storageAsDefect } from "../Unavailable.js"

const see = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: { "cache-control": "no-store" } })

const backToDashboard = html`<p><a href="/dashboard#code-host">Back to the dashboard</a>, where you can start the connection again.</p>`

/** A problem for a person (an HTML page) or a program (problem+json), by the request's Accept. */
const answer = (problem: ProblemJson, headers: Record<string, string> = {}) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (req) =>
    prefersHtml(req.headers["accept"])
      ? HttpServerResponse.setHeaders(problemPage(problem, backToDashboard), headers)
      : problemResponse(problem, { ...retryHeaders(problem), ...headers }))

const signInFirst = problemBody(401, "unauthenticated", "Sign in first", "Connecting a code-host login needs you signed in in this browser; sign in, then start the connection from your dashboard.")
const csrfFailed = problemBody(403, "csrf_failed", "Request refused", "This form is stale or was not sent from your dashboard; nothing was changed.")

/**
 * The code-host connection in the browser (browser-session only: an API key or a bearer token cannot start
 * it, and a link cannot either, so no one can hand another person a link that connects that person's login
 * to their own account):
 * - `POST /auth/host/start` (the dashboard's CSRF-checked form): 303 to GitHub; the flow's random nonce goes
 *   into a short-lived cookie (HttpOnly, SameSite=Lax, 10 minutes; `__Host-` and Secure, Path=/ under https,
 *   else Path=/auth/host). The sealed state carries its digest; the PKCE verifier is derived from it.
 * - `GET /auth/host/callback`: in that browser and session only; shows "connect login X to account Y?".
 * - `POST /auth/host/confirm` (CSRF-checked): stores the login. `GET /auth/host/start` answers 405.
 */
export const hostConnectionRoutes = Effect.gen(function*() {
  const connection = yield* storageAsDefect(HostConnection)
  const sessions = yield* PageSessions
  const { baseUrl } = yield* PublicOrigin
  const secure = new URL(baseUrl).protocol === "https:"
  // `__Host-` requires Path=/ (and gives a host-only cookie nobody on a sibling domain can plant); without
  // https the cookie is at least kept to the flow's own paths.
  const nonceCookie = secure ? "__Host-rm_host_connect" : "rm_host_connect"
  const cookieOptions = { httpOnly: true, sameSite: "lax", secure, path: secure ? "/" : "/auth/host" } as const

  const withNonce = (res: HttpServerResponse.HttpServerResponse, nonce: Redacted.Redacted<string>) =>
    HttpServerResponse.unsafeSetCookie(res, nonceCookie, Redacted.value(nonce), { ...cookieOptions, maxAge: `${HOST_CONNECTION_TTL_MS / 1000} seconds` })
  const withoutNonce = (res: HttpServerResponse.HttpServerResponse) =>
    HttpServerResponse.unsafeSetCookie(res, nonceCookie, "", { ...cookieOptions, maxAge: 0 })

  const nonceOf = (req: HttpServerRequest.HttpServerRequest) => {
    const value = req.cookies[nonceCookie]
    return value === undefined || value === "" || value.length > 128 ? undefined : Redacted.make(value)
  }

  const notConfigured = answer(problemBody(503, "not_configured", "Not configured", "The code-host connection is off: the operator has not set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET."))

  /** Runs `body` for the signed-in browser, turning use-case failures into problems. */
  const signedIn = (
    body: (p: Principal, req: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, PageError, HttpServerRequest.HttpServerRequest>
  ) =>
    Effect.gen(function*() {
      const req = yield* HttpServerRequest.HttpServerRequest
      const principal = yield* sessions.current
      if (Option.isNone(principal)) return yield* answer(signInFirst)
      if (!connection.configured) return yield* notConfigured
      return yield* body(principal.value, req).pipe(Effect.catchAll((e) => answer(problemOf(e))))
    }).pipe(Effect.catchTag("RateLimited", (e) => answer(problemOf(e))))

  const start = signedIn((p, req) =>
    Effect.gen(function*() {
      const form = yield* readForm
      if (!sessions.checkForm(req, form, p)) return yield* answer(csrfFailed)
      const { browserNonce, url } = yield* connection.start(p)
      return withNonce(HttpServerResponse.redirect(url, { status: 303, headers: { "cache-control": "no-store" } }), browserNonce)
    }))

  const startByGet = answer(
    problemBody(405, "method_not_allowed", "Method not allowed", "The code-host connection starts from the dashboard of a signed-in browser (a POST of its form); API keys and links cannot start it."),
    { allow: "POST" }
  )

  const confirmPage = (pending: PendingConnection, csrf: string) =>
    htmlResponse(layout({
      title: "Connect GitHub",
      signedInAs: pending.account.email,
      main: html`<h1>Connect a GitHub login</h1>
<p>Connect the GitHub login <strong id="host-login">${pending.login}</strong> to the repomarket account
<strong id="account-email">${pending.account.email}</strong>?</p>
<p class="muted">This account can then take over listings of repositories that login administers, and choose where
their payouts go. If you did not start this from your own dashboard just now, do not connect.</p>
<form method="post" action="/auth/host/confirm"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="confirmation" value="${pending.confirmation}"><button type="submit">Connect ${pending.login}</button></form>
<p><a href="/dashboard#code-host">Cancel</a></p>`
    }))

  const callback = signedIn((p, req) =>
    Effect.gen(function*() {
      const params = new URL(req.url, "http://x").searchParams
      const one = (name: string) => params.get(name) ?? undefined
      const pending = yield* connection.callback(p, { code: one("code"), state: one("state"), error: one("error") }, nonceOf(req))
      return confirmPage(pending, sessions.csrfToken(p))
    }))

  const confirm = signedIn((p, req) =>
    Effect.gen(function*() {
      const form = yield* readForm
      if (!sessions.checkForm(req, form, p)) return yield* answer(csrfFailed)
      yield* connection.confirm(p, form.get("confirmation"), nonceOf(req))
      return withoutNonce(see("/dashboard?done=host_connected#code-host"))
    }))

  return { start, startByGet, callback, confirm } as const
})

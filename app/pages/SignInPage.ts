import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import type { MailUnavailable, RateLimited } from "../../domain/Errors.js"
import { InvalidInput } from "../../domain/Errors.js"
import { Auth } from "../../domain/usecases/Auth.js"
import type { MailDelivery } from "../../ports/Mailer.js"
import { problemBody, type ProblemJson } from "../Problem.js"
import { clientAddress } from "../handlers/ClientAddress.js"
import { problemBox, problemOf, problemPage, retryHeaders } from "./ErrorPage.js"
import { html, htmlResponse, layout } from "./Html.js"
import { PageSessions, readForm } from "./Session.js"
import { storageAsDefect } from "../Unavailable.js"

const see = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: { "cache-control": "no-store" } })

const signInForm = (delivery: MailDelivery, email: string, problem?: ProblemJson) =>
  htmlResponse(layout({
    title: "Sign in",
    main: html`<h1>Sign in</h1>
${
      delivery === "log"
        ? html`<p>No password: you get a link that signs you in. The first sign-in creates your seller account.</p>
<p class="notice ok">This server sends no mail (it has no <code>SMTP_URL</code>): it writes the sign-in link to its own log. If you run it, the link appears in its output; if not, ask whoever does.</p>`
        : html`<p>No password: we email you a link that signs you in. The first sign-in creates your seller account.</p>`
    }
${problem === undefined ? "" : problemBox(problem)}
<form method="post" action="/signin">
<label for="email">Email</label><input type="email" id="email" name="email" autocomplete="email" required maxlength="320" value="${email}">
<p><button type="submit">${delivery === "log" ? "Write a sign-in link to the server log" : "Email me a sign-in link"}</button></p>
</form>`
  }), { status: problem?.status ?? 200, headers: problem === undefined ? {} : retryHeaders(problem) })

/** What the page says once a link was asked for: where to find it. */
const linkOnItsWay = (delivery: MailDelivery, email: string) =>
  delivery === "log"
    ? layout({
      title: "Sign-in link written to the server log",
      main: html`<h1>Sign-in link written to the server log</h1>
<p>This server sends no mail (it has no <code>SMTP_URL</code>), so the sign-in link for <strong>${email}</strong> was written to its log instead of your inbox. It works once and for 15 minutes.</p>
<p>If you run this server, find the mail to ${email} in its output (it begins <code>[development mailer: …]</code>) and open the <code>/auth/verify</code> link in it. If someone else runs it, ask them for the link.</p>
<p class="muted">Nothing in the log? <a href="/signin">Ask again</a>.</p>`
    })
    : layout({
      title: "Check your mail",
      main: html`<h1>Check your mail</h1>
<p>If <strong>${email}</strong> can receive mail, a sign-in link is on its way. It works once and for 15 minutes.</p>
<p class="muted">Nothing arrived? Check the spam folder, or <a href="/signin">ask again</a>.</p>`
    })

const crossSite = () =>
  problemPage(
    problemBody(403, "cross_site_request", "Request refused", "This form was not sent from repomarket's own pages."),
    html`<p>Open <a href="/signin">the sign-in page</a> and try again.</p>`
  )

/** The sign-in pages: ask for a link, the emailed link's confirmation (POST), and signing out. */
export const signInRoutes = Effect.gen(function*() {
  const auth = yield* storageAsDefect(Auth)
  const sessions = yield* PageSessions
  const rateLimitedPage = (e: RateLimited) => problemPage(problemOf(e))

  /** `GET /signin`: the form, or the dashboard for a seller already signed in. */
  const showSignIn = Effect.gen(function*() {
    if (Option.isSome(yield* sessions.current)) return see("/dashboard")
    return signInForm(auth.linkDelivery, "")
  }).pipe(Effect.catchTag("RateLimited", (e) => Effect.succeed(rateLimitedPage(e))))

  /** `POST /signin`: emails the link; answers alike whether or not an account exists. */
  const requestLink = Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    if (!sessions.fromOurPages(req)) return crossSite()
    const email = ((yield* readForm).get("email") ?? "").trim()
    return yield* auth.requestMagicLink(email, yield* clientAddress).pipe(
      Effect.as(htmlResponse(linkOnItsWay(auth.linkDelivery, email))),
      Effect.catchAll((e: InvalidInput | RateLimited | MailUnavailable) => Effect.succeed(signInForm(auth.linkDelivery, email, problemOf(e))))
    )
  })

  /** `GET /signout`: a confirmation (a GET never changes state). */
  const showSignOut = Effect.gen(function*() {
    const principal = yield* sessions.current
    if (Option.isNone(principal)) return see("/signin")
    return htmlResponse(layout({
      title: "Sign out",
      main: html`<h1>Sign out</h1><form method="post" action="/signout">
<input type="hidden" name="${sessions.CSRF_FIELD}" value="${sessions.csrfToken(principal.value)}">
<button type="submit">Sign out of this browser</button></form>`
    }))
  }).pipe(Effect.catchTag("RateLimited", (e) => Effect.succeed(rateLimitedPage(e))))

  /** `POST /signout`: ends the session everywhere it is used and drops the cookie. */
  const signOut = Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    const principal = yield* sessions.current
    if (Option.isNone(principal)) return sessions.withoutSession(see("/signin"))
    if (!sessions.checkForm(req, yield* readForm, principal.value)) return crossSite()
    yield* auth.signOut(principal.value)
    return sessions.withoutSession(htmlResponse(layout({
      title: "Signed out",
      main: html`<h1>Signed out</h1><p>This browser's session has ended. <a href="/signin">Sign in again</a>.</p>`
    })))
  }).pipe(Effect.catchTag("RateLimited", (e) => Effect.succeed(rateLimitedPage(e))))

  return { showSignIn, requestLink, showSignOut, signOut } as const
})

/**
 * `POST /auth/verify` from the emailed link's page, in a browser: the session goes into the cookie and the
 * seller lands on the dashboard (303). The page's `strict-origin` referrer policy lets the browser send our
 * origin (never the URL), so a post from anywhere else, `Origin: null` included, is refused as login CSRF;
 * a refused one leaves the token unused.
 */
export const verifyInBrowser = (token: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const auth = yield* storageAsDefect(Auth)
    const sessions = yield* PageSessions
    const req = yield* HttpServerRequest.HttpServerRequest
    if (!sessions.fromOurPages(req)) return crossSite()
    return yield* auth.verify(token).pipe(
      Effect.map((s) => sessions.withSession(see("/dashboard"), s.accessToken)),
      Effect.catchAll((e) =>
        Effect.succeed(problemPage(
          problemOf(e._tag === "InvalidInput" ? InvalidInput.forField("token", "must be the token from the emailed link") : e),
          html`<p><a href="/signin">Ask for a new sign-in link</a>.</p>`
        )))
    )
  })

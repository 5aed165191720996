import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { html, htmlResponse, layout } from "./Html.js"

/**
 * `GET /auth/verify?token=…`: the page the emailed link opens. It never consumes the token (mail
 * scanners pre-open links); its button POSTs the token to `/auth/verify`, which sets the session cookie.
 * Its URL holds the token, so no request from it carries the URL as referrer; `strict-origin` still sends
 * our origin, so the form's POST carries `Origin: <BASE_URL>` (with `no-referrer` browsers send
 * `Origin: null`, which the POST refuses as possible login CSRF).
 */
export const verifyPage = Effect.map(HttpServerRequest.HttpServerRequest, (req) => {
  const token = new URL(req.url, "http://x").searchParams.get("token") ?? ""
  const main = token === ""
    ? html`<h1>Sign-in link incomplete</h1><p>This link has no token. Open the whole link from the email, or <a href="/signin">ask for a new one</a>.</p>`
    : html`<h1>Sign in to repomarket</h1><p>Press the button to finish signing in. The link works once and for 15 minutes.</p>
<form method="post" action="/auth/verify"><input type="hidden" name="token" value="${token}"><button type="submit">Sign in</button></form>`
  return htmlResponse(layout({ title: "Sign in", main }), { referrer: "strict-origin" })
})

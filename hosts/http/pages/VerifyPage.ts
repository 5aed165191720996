import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { escapeHtml, page, PAGE_CSP } from "./Html.js"

/**
 * `GET /auth/verify?token=…`: the page the emailed link opens. It never consumes the token (mail
 * scanners pre-open links); its button POSTs the token to `/auth/verify`.
 */
export const verifyPage = Effect.map(HttpServerRequest.HttpServerRequest, (req) => {
  const token = new URL(req.url, "http://x").searchParams.get("token") ?? ""
  const body = token === ""
    ? `<h1>Sign-in link incomplete</h1><p>This link has no token. Open the whole link from the email, or ask for a new one.</p>`
    : `<h1>Sign in to repomarket</h1><p>Press the button to finish signing in. The link works once and for 15 minutes.</p>
<form method="post" action="/auth/verify"><input type="hidden" name="token" value="${escapeHtml(token)}"><button type="submit">Sign in</button></form>`
  return HttpServerResponse.html(page("Sign in", body)).pipe(
    HttpServerResponse.setHeaders({
      "content-security-policy": PAGE_CSP,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff"
    })
  )
})

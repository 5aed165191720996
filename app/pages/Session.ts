import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import { type Principal, SESSION_TTL_MS } from "../../domain/Credentials.js"
import type { RateLimited } from "../../domain/Errors.js"
import { Auth } from "../../domain/usecases/Auth.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { storageAsDefect } from "../Unavailable.js"

/**
 * The browser's session: the same opaque session a magic link yields for the API, carried in an HttpOnly,
 * SameSite=Lax cookie (Secure, and `__Host-` prefixed, when BASE_URL is https). It is resolved through
 * `Auth.authenticate` on every request, so expiry, sign-out and the per-credential limit apply as for a
 * bearer. Only the HTML routes read it; the JSON API stays bearer-only and so needs no CSRF defence.
 *
 * Every state-changing form carries a CSRF token: an HMAC (SecretBox.mac) of the session id, so it needs no
 * storage, dies with the session and cannot be computed without the server key. `Origin` and
 * `Sec-Fetch-Site`, when the browser sends them, must also name our own origin.
 */
export interface Form {
  readonly get: (name: string) => string | undefined
}

const CSRF_FIELD = "csrf"

export class PageSessions extends Effect.Service<PageSessions>()("repomarket/PageSessions", {
  effect: Effect.gen(function*() {
    const auth = yield* storageAsDefect(Auth)
    const box = yield* SecretBox
    const { baseUrl } = yield* PublicOrigin
    const origin = new URL(baseUrl).origin
    const secure = origin.startsWith("https:")
    const cookieName = secure ? "__Host-rm_session" : "rm_session"

    const withSession = (res: HttpServerResponse.HttpServerResponse, token: Redacted.Redacted<string>) =>
      HttpServerResponse.unsafeSetCookie(res, cookieName, Redacted.value(token), {
        httpOnly: true,
        sameSite: "lax",
        secure,
        path: "/",
        maxAge: `${SESSION_TTL_MS / 1000} seconds`
      })

    const withoutSession = (res: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.unsafeSetCookie(res, cookieName, "", { httpOnly: true, sameSite: "lax", secure, path: "/", maxAge: 0 })

    /** The signed-in seller, if the cookie holds a live session (never an API key). */
    const current: Effect.Effect<Option.Option<Principal>, RateLimited, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
      const value = (yield* HttpServerRequest.HttpServerRequest).cookies[cookieName]
      if (value === undefined || value === "") return Option.none()
      return yield* auth.authenticate(Redacted.make(value)).pipe(
        Effect.map((p) => (p.via === "session" ? Option.some(p) : Option.none())),
        Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none<Principal>()))
      )
    })

    const csrfMessage = (p: Principal) => `repomarket/csrf/v1:${p.credentialId}`
    const csrfToken = (p: Principal) => box.mac(csrfMessage(p))

    /**
     * Whether the request comes from our own pages as far as the browser says: `Sec-Fetch-Site`, when sent,
     * is `same-origin`, and `Origin`, when sent, is exactly BASE_URL's. `Origin: null` (a sandboxed frame,
     * a data: page, a cross-origin redirect) is refused like any foreign origin, also by browsers that send
     * no Sec-Fetch-Site. Non-browser clients send neither header; forms that change a session's state still
     * need its CSRF token, and the sign-in link's form has the link's single-use token.
     */
    const fromOurPages = (req: HttpServerRequest.HttpServerRequest) => {
      const site = req.headers["sec-fetch-site"]
      if (site !== undefined && site !== "same-origin") return false
      const from = req.headers["origin"]
      return from === undefined || from === origin
    }

    /** A form POST from our own dashboard, for this session. */
    const checkForm = (req: HttpServerRequest.HttpServerRequest, form: Form, p: Principal) => {
      const token = form.get(CSRF_FIELD)
      return fromOurPages(req) && token !== undefined && box.verifyMac(csrfMessage(p), token)
    }

    return { cookieName, withSession, withoutSession, current, csrfToken, fromOurPages, checkForm, CSRF_FIELD } as const
  })
}) {}

const FIELD_MAX = 4096

/** The urlencoded body of a form POST (the first value of each field, bounded); empty when unreadable. */
export const readForm: Effect.Effect<Form, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  const params = yield* req.urlParamsBody.pipe(Effect.orElseSucceed(() => []))
  const fields = new Map<string, string>()
  for (const [k, v] of params) if (!fields.has(k)) fields.set(k, v.slice(0, FIELD_MAX))
  return { get: (name) => fields.get(name) }
})

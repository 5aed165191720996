import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { Auth } from "../../domain/usecases/Auth.js"
import { Api } from "../Api.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { verifyInBrowser } from "../pages/SignInPage.js"
import { PageSessions } from "../pages/Session.js"
import { clientAddress } from "./ClientAddress.js"
import { storageAsDefect } from "../Unavailable.js"

/** The emailed link's page posting its form from a browser (urlencoded, HTML preferred), not an API call. */
const isBrowserForm = (req: HttpServerRequest.HttpServerRequest) =>
  (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded" &&
  prefersHtml(req.headers["accept"])

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* storageAsDefect(Auth)
    const sessions = yield* PageSessions
    return handlers
      .handle("requestMagicLink", ({ payload }) =>
        Effect.flatMap(clientAddress, (client) => auth.requestMagicLink(payload.email, client)).pipe(
          // Where the link went is the same for every address (no enumeration); the link itself never is here.
          Effect.as({ sent: true as const, delivery: auth.linkDelivery })
        ))
      .handle("verify", ({ payload }) =>
        Effect.gen(function*() {
          // In a browser the session goes into an HttpOnly cookie and the seller lands on the dashboard.
          if (isBrowserForm(yield* HttpServerRequest.HttpServerRequest)) {
            return yield* verifyInBrowser(payload.token).pipe(Effect.provideService(PageSessions, sessions), Effect.provideService(Auth, auth))
          }
          const s = yield* auth.verify(payload.token)
          return {
            access_token: Redacted.value(s.accessToken),
            token_type: "Bearer" as const,
            expires_at: s.expiresAt.toISOString(),
            account: { id: s.account.id, email: s.account.email }
          }
        }))
  }))

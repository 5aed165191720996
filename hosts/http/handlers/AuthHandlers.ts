import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { Auth } from "../../../domain/usecases/Auth.js"
import { HostConnection } from "../../../domain/usecases/HostConnection.js"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../Security.js"
import { clientAddress } from "./ClientAddress.js"

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const hostConnection = yield* HostConnection
    return handlers
      .handle("requestMagicLink", ({ payload }) =>
        Effect.flatMap(clientAddress, (client) => auth.requestMagicLink(payload.email, client)).pipe(
          Effect.as({ sent: true as const })
        ))
      .handle("verify", ({ payload }) =>
        Effect.map(auth.verify(payload.token), (s) => ({
          access_token: Redacted.value(s.accessToken),
          token_type: "Bearer" as const,
          expires_at: s.expiresAt.toISOString(),
          account: { id: s.account.id, email: s.account.email }
        })))
      .handle("hostConnectStart", () =>
        Effect.flatMap(CurrentPrincipal, hostConnection.start).pipe(
          Effect.map((url) => HttpServerResponse.redirect(url, { status: 302, headers: { "cache-control": "no-store" } }))
        ))
      .handle("hostConnectCallback", ({ urlParams }) =>
        Effect.map(hostConnection.finish(urlParams), (account) => ({ host_login: account.hostLogin! })))
  }))

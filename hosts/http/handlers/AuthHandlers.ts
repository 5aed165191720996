import { HttpApiBuilder } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { NotConfigured } from "../../../domain/Errors.js"
import { Auth } from "../../../domain/usecases/Auth.js"
import { Api } from "../Api.js"
import { clientAddress } from "./ClientAddress.js"

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* Auth
    const notConfigured = new NotConfigured({
      detail: "The code-host connection is off: the operator has not set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET."
    })
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
      .handle("hostConnectStart", () => Effect.fail(notConfigured))
      .handle("hostConnectCallback", () => Effect.fail(notConfigured))
  }))

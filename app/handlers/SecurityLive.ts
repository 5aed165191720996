import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { Unauthenticated } from "../../domain/Errors.js"
import { Auth } from "../../domain/usecases/Auth.js"
import { Authentication, OptionalAuthentication } from "../Security.js"
import { storageAsDefect } from "../Unavailable.js"

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(storageAsDefect(Auth), (auth) => ({ bearer: (token: Redacted.Redacted<string>) => auth.authenticate(token) }))
)

const BEARER = /^Bearer (\S+)$/i

export const OptionalAuthenticationLive = Layer.effect(
  OptionalAuthentication,
  Effect.map(storageAsDefect(Auth), (auth) =>
    Effect.gen(function*() {
      const header = (yield* HttpServerRequest.HttpServerRequest).headers["authorization"]
      if (header === undefined || header === "") return Option.none()
      const match = BEARER.exec(header)
      if (!match) return yield* new Unauthenticated({ detail: "Authorization must be \"Bearer <credential>\"." })
      return Option.some(yield* auth.authenticate(Redacted.make(match[1]!)))
    }))
)

import { Context, Data, type Effect, type Redacted } from "effect"

export type CodeHostIdentityFailure =
  /** The operator has not configured an OAuth app. */
  | "not_configured"
  /** The one-time code was refused (expired, used, or forged). */
  | "code_rejected"
  /** The code host failed or rate-limited us. */
  | "unavailable"

export class CodeHostIdentityError extends Data.TaggedError("CodeHostIdentityError")<{
  readonly reason: CodeHostIdentityFailure
  readonly message: string
  readonly retryAfterSeconds?: number
}> {}

/**
 * Proof of who a seller is on the code host (the code-host connection, an OAuth web flow). The host's
 * access token never leaves the adapter: only the verified login comes back.
 */
export class CodeHostIdentity extends Context.Tag("ports/CodeHostIdentity")<CodeHostIdentity, {
  /** False when no OAuth app is configured: every call then fails with `not_configured`. */
  readonly configured: boolean
  /** Where to send the seller's browser; `state` comes back unchanged on the callback. */
  readonly authorizeUrl: (state: string) => Effect.Effect<string, CodeHostIdentityError>
  /** Exchanges the callback's one-time code for the login it proves. */
  readonly exchange: (code: Redacted.Redacted<string>) => Effect.Effect<string, CodeHostIdentityError>
}>() {}

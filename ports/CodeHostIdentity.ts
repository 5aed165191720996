import { Context, Data, Effect, type Redacted } from "effect"

/** Why a `CodeHostIdentity` call failed. */
export type CodeHostIdentityFailure =
  /** The operator has not configured an OAuth app. */
  | "not_configured"
  /** The one-time code was refused (expired, used, forged, or its proof key did not match). */
  | "code_rejected"
  /** The code host failed or rate-limited us. */
  | "unavailable"

/** Raised by `CodeHostIdentity` calls: not configured, a refused code, or the host failing. */
export class CodeHostIdentityError extends Data.TaggedError("CodeHostIdentityError")<{
  readonly reason: CodeHostIdentityFailure
  readonly message: string
  readonly retryAfterSeconds?: number
}> {}

/** What a finished authorization proves: the verified login, and the user's token for asking about repos. */
export interface HostProof {
  /** The code-host login the authorization proved. */
  readonly login: string
  /** The user's own token (no scope: it reads only what is public). Seal it before storing; never show it. */
  readonly token: Redacted.Redacted<string>
}

/**
 * Proof of who a seller is on the code host (the code-host connection, an OAuth web flow with PKCE), and of
 * what that seller controls there.
 */
export class CodeHostIdentity extends Context.Tag("repomarket/CodeHostIdentity")<CodeHostIdentity, {
  /** False when no OAuth app is configured: every call then fails with `not_configured`. */
  readonly configured: boolean
  /** The origin of the authorize page the seller's browser is sent to (null when not configured). */
  readonly authorizeOrigin: string | null
  /**
   * Where to send the seller's browser; `state` comes back unchanged on the callback. `proofKey` is the flow's
   * PKCE verifier: only its S256 challenge goes into the URL.
   */
  readonly authorizeUrl: (state: string, proofKey: Redacted.Redacted<string>) => Effect.Effect<string, CodeHostIdentityError>
  /** Exchanges the callback's one-time code, with the flow's proof key, for the login it proves. */
  readonly exchange: (
    code: Redacted.Redacted<string>,
    proofKey: Redacted.Redacted<string>
  ) => Effect.Effect<HostProof, CodeHostIdentityError>
  /**
   * Whether the holder of `token` controls the repo: the code host grants them admin on it (an organisation's
   * owners and the repo's admins; a user on their own repos). False for a revoked token or a repo the token
   * cannot see.
   */
  readonly controls: (
    token: Redacted.Redacted<string>,
    repo: { readonly owner: string; readonly name: string }
  ) => Effect.Effect<boolean, CodeHostIdentityError>
}>() {}

/** The identity of a server with no OAuth app: every call fails with `not_configured` and this message. */
export const identityNotConfigured = (message: string): CodeHostIdentity["Type"] => {
  const off = new CodeHostIdentityError({ reason: "not_configured", message })
  return {
    configured: false,
    authorizeOrigin: null,
    authorizeUrl: () => Effect.fail(off),
    exchange: () => Effect.fail(off),
    controls: () => Effect.fail(off)
  }
}

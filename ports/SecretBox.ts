import { Context, Data, type Effect, type Redacted } from "effect"
import type { SealedSecret, TokenDigest } from "../domain/Ids.js"

/** Raised by `SecretBox.open` when a sealed secret does not open (wrong key, wrong `aad`, or tampered). */
export class SecretBoxError extends Data.TaggedError("SecretBoxError")<{ readonly message: string }> {}

/**
 * Everything secret-keeping: sealing secrets that must be read again (code-host tokens, webhook secrets)
 * with authenticated encryption bound to `aad`, one-way digests of bearer tokens, and secure randomness.
 */
export class SecretBox extends Context.Tag("repomarket/SecretBox")<SecretBox, {
  readonly seal: (plaintext: Redacted.Redacted<string>, aad: string) => Effect.Effect<SealedSecret>
  readonly open: (sealed: SealedSecret, aad: string) => Effect.Effect<Redacted.Redacted<string>, SecretBoxError>
  readonly digest: (token: Redacted.Redacted<string>) => TokenDigest
  readonly randomBytes: (length: number) => Uint8Array
  /** HMAC-SHA256 (hex) under the current key, for stateless tokens such as download receipts. */
  readonly mac: (message: string) => string
  /** True when `tag` is the MAC of `message` under any configured key (so keys can rotate). */
  readonly verifyMac: (message: string, tag: string) => boolean
}>() {}

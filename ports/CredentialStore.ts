import { Context, type Effect, type Option } from "effect"
import type { ApiKey, MagicLinkToken, Session } from "../domain/Credentials.js"
import type { AccountId, ApiKeyId, SessionId, TokenDigest } from "../domain/Ids.js"
import type { StorageError } from "./StorageError.js"

/**
 * Magic-link tokens, sessions and API keys, each stored only as a digest of the secret. Every method fails with
 * `StorageError` when the store does (`unavailable` when the database did not answer).
 */
export class CredentialStore extends Context.Tag("repomarket/CredentialStore")<CredentialStore, {
  readonly putMagicToken: (token: MagicLinkToken) => Effect.Effect<void, StorageError>
  /** Consumes the token if it exists and has not expired at `now`: at most one caller ever gets it. */
  readonly takeMagicToken: (digest: TokenDigest, now: Date) => Effect.Effect<Option.Option<MagicLinkToken>, StorageError>
  readonly putSession: (session: Session) => Effect.Effect<void, StorageError>
  readonly findSession: (digest: TokenDigest) => Effect.Effect<Option.Option<Session>, StorageError>
  readonly deleteSession: (id: SessionId) => Effect.Effect<void, StorageError>
  readonly putApiKey: (key: ApiKey) => Effect.Effect<void, StorageError>
  readonly findApiKey: (digest: TokenDigest) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  /** The account's keys, oldest first, revoked ones included. */
  readonly listApiKeys: (accountId: AccountId) => Effect.Effect<ReadonlyArray<ApiKey>, StorageError>
  /** Revokes one of the account's active keys; false when there is no such active key. */
  readonly revokeApiKey: (accountId: AccountId, id: ApiKeyId, at: Date) => Effect.Effect<boolean, StorageError>
  readonly touchApiKey: (id: ApiKeyId, at: Date) => Effect.Effect<void, StorageError>
}>() {}

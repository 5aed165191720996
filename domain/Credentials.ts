import { Schema } from "effect"
import { AccountId, ApiKeyId, SessionId, TokenDigest } from "./Ids.js"

/** Lifetimes decided in DECISIONS.md. */
export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000
/** How long a browser session lasts (30 days). */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** A single-use sign-in token; only its digest is stored. */
export class MagicLinkToken extends Schema.Class<MagicLinkToken>("MagicLinkToken")({
  digest: TokenDigest,
  email: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
}) {}

/** A signed-in session of an account; only the digest of its token is stored. Expires after `SESSION_TTL_MS`. */
export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  digest: TokenDigest,
  accountId: AccountId,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
}) {}

/**
 * An account's API key for programmatic calls; only its digest and last four characters are stored. Revoked keys
 * stay on record.
 */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: ApiKeyId,
  digest: TokenDigest,
  accountId: AccountId,
  last4: Schema.String,
  createdAt: Schema.DateFromSelf,
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

/** Who is calling: an account, and by which kind of credential (some calls take a session only). */
export class Principal extends Schema.Class<Principal>("Principal")({
  accountId: AccountId,
  via: Schema.Literal("session", "api_key"),
  credentialId: Schema.String
}) {}

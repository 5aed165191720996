import { Schema } from "effect"
import { ApiKey, MagicLinkToken, Session } from "../../domain/Credentials.js"
import { TimestampColumn } from "./Columns.js"

/** Rows of `magic_link_tokens`, `sessions` and `api_keys`. Each holds a digest, never the token. */
export const MagicLinkTokenRow = Schema.Struct({
  digest: Schema.String,
  email: Schema.String,
  created_at: TimestampColumn,
  expires_at: TimestampColumn
})

export const MagicLinkTokenFromRow = Schema.transform(MagicLinkTokenRow, MagicLinkToken, {
  strict: true,
  decode: (row) => ({ digest: row.digest, email: row.email, createdAt: row.created_at, expiresAt: row.expires_at }),
  encode: (token) => ({
    digest: token.digest,
    email: token.email,
    created_at: token.createdAt,
    expires_at: token.expiresAt
  })
})

export const SessionRow = Schema.Struct({
  id: Schema.String,
  digest: Schema.String,
  account_id: Schema.String,
  created_at: TimestampColumn,
  expires_at: TimestampColumn
})

export const SessionFromRow = Schema.transform(SessionRow, Session, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    digest: row.digest,
    accountId: row.account_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at
  }),
  encode: (session) => ({
    id: session.id,
    digest: session.digest,
    account_id: session.accountId,
    created_at: session.createdAt,
    expires_at: session.expiresAt
  })
})

export const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  digest: Schema.String,
  account_id: Schema.String,
  last4: Schema.String,
  created_at: TimestampColumn,
  last_used_at: Schema.NullOr(TimestampColumn),
  revoked_at: Schema.NullOr(TimestampColumn)
})

export const ApiKeyFromRow = Schema.transform(ApiKeyRow, ApiKey, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    digest: row.digest,
    accountId: row.account_id,
    last4: row.last4,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at
  }),
  encode: (key) => ({
    id: key.id,
    digest: key.digest,
    account_id: key.accountId,
    last4: key.last4,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt
  })
})

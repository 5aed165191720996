import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { AccountId, ApiKeyId, SessionId, TokenDigest } from "../../domain/Ids.js"
import { CredentialStore } from "../../ports/CredentialStore.js"
import { TimestampColumn } from "./Columns.js"
import { ApiKeyFromRow, MagicLinkTokenFromRow, SessionFromRow } from "./CredentialRows.js"
import { orStorageError } from "./StorageErrors.js"

/** The CredentialStore on PostgreSQL (or PGlite) through `@effect/sql`. */
export const CredentialStoreSql = Layer.effect(
  CredentialStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const putMagicToken = SqlSchema.void({
      Request: MagicLinkTokenFromRow,
      execute: (row) => sql`INSERT INTO magic_link_tokens ${sql.insert(row)}`
    })
    // One statement deletes and returns: of concurrent takers only the one whose DELETE removed the row
    // gets it. An expired token is deleted too, but not handed out.
    const takeMagicToken = SqlSchema.findOne({
      Request: Schema.Struct({ digest: TokenDigest, now: TimestampColumn }),
      Result: MagicLinkTokenFromRow,
      execute: ({ digest, now }) =>
        sql`WITH taken AS (DELETE FROM magic_link_tokens WHERE digest = ${digest} RETURNING *)
            SELECT * FROM taken WHERE expires_at > ${now}`
    })
    const putSession = SqlSchema.void({
      Request: SessionFromRow,
      execute: (row) => sql`INSERT INTO sessions ${sql.insert(row)}`
    })
    const findSession = SqlSchema.findOne({
      Request: TokenDigest,
      Result: SessionFromRow,
      execute: (digest) => sql`SELECT * FROM sessions WHERE digest = ${digest}`
    })
    const deleteSession = SqlSchema.void({
      Request: SessionId,
      execute: (id) => sql`DELETE FROM sessions WHERE id = ${id}`
    })
    const putApiKey = SqlSchema.void({
      Request: ApiKeyFromRow,
      execute: (row) => sql`INSERT INTO api_keys ${sql.insert(row)}`
    })
    const findApiKey = SqlSchema.findOne({
      Request: TokenDigest,
      Result: ApiKeyFromRow,
      execute: (digest) => sql`SELECT * FROM api_keys WHERE digest = ${digest}`
    })
    const listApiKeys = SqlSchema.findAll({
      Request: AccountId,
      Result: ApiKeyFromRow,
      execute: (accountId) => sql`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`
    })
    // A single conditional UPDATE: revocation is atomic, and only an active key of this account matches.
    const revokeApiKey = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: AccountId, id: ApiKeyId, at: TimestampColumn }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ accountId, at, id }) =>
        sql`UPDATE api_keys SET revoked_at = ${at}
            WHERE id = ${id} AND account_id = ${accountId} AND revoked_at IS NULL
            RETURNING id`
    })
    const touchApiKey = SqlSchema.void({
      Request: Schema.Struct({ id: ApiKeyId, at: TimestampColumn }),
      execute: ({ at, id }) => sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`
    })

    return {
      putMagicToken: (token) => putMagicToken(token).pipe(orStorageError),
      takeMagicToken: (digest, now) => takeMagicToken({ digest, now }).pipe(orStorageError),
      putSession: (session) => putSession(session).pipe(orStorageError),
      findSession: (digest) => findSession(digest).pipe(orStorageError),
      deleteSession: (id) => deleteSession(id).pipe(orStorageError),
      putApiKey: (key) => putApiKey(key).pipe(orStorageError),
      findApiKey: (digest) => findApiKey(digest).pipe(orStorageError),
      listApiKeys: (accountId) => listApiKeys(accountId).pipe(orStorageError),
      revokeApiKey: (accountId, id, at) =>
        revokeApiKey({ accountId, id, at }).pipe(Effect.map(Option.isSome), orStorageError),
      touchApiKey: (id, at) => touchApiKey({ id, at }).pipe(orStorageError)
    }
  })
)

import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SingleUse } from "../../ports/SingleUse.js"
import { orStorageError } from "./StorageErrors.js"

/**
 * Spent values in the `single_use` table: the primary key decides between concurrent spenders. An expired
 * row is taken over by the same statement (its value is refused on expiry anyway), and expired rows are
 * swept now and then.
 */
export const SingleUseSql = Layer.effect(
  SingleUse,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let calls = 0
    const sweep = sql`DELETE FROM single_use WHERE expires_at < now() - interval '1 hour'`
    return {
      spend: (purpose, digest, expiresAt) =>
        Effect.gen(function*() {
          if (++calls % 500 === 0) yield* sweep
          const rows = yield* sql<{ purpose: string }>`
            INSERT INTO single_use (purpose, digest, expires_at) VALUES (${purpose}, ${digest}, ${expiresAt})
            ON CONFLICT (purpose, digest) DO UPDATE SET expires_at = EXCLUDED.expires_at
              WHERE single_use.expires_at <= now()
            RETURNING purpose`
          return rows.length === 1
        }).pipe(orStorageError)
    }
  })
)

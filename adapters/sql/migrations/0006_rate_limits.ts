import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Per-client limits counted in PostgreSQL, so several hosts share one count (adapters/sql/RateLimiterSql.ts).
 * The shape is the one `rate-limiter-flexible`'s PostgreSQL store reads and writes (it is told the table exists,
 * so the schema stays here with the others): `key` a digest of the limit's key, `points` spent in the current
 * window, `expire` the window's end in epoch milliseconds. Rows of past windows are deleted by the store every
 * hour; the index serves that sweep.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS rate_limits (
    key varchar(255) PRIMARY KEY,
    points integer NOT NULL DEFAULT 0,
    expire bigint
  )`
  yield* sql`CREATE INDEX IF NOT EXISTS rate_limits_expire_idx ON rate_limits (expire)`
})

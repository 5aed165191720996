import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Redacted } from "effect"

const APPLICATION_NAME = "repomarket"

/**
 * How long the service waits for PostgreSQL. A frozen or lock-bound database must cost a request a bounded
 * time and a 503 (see app/Unavailable.ts), not a hang:
 * - `statementTimeoutMs` (`DATABASE_STATEMENT_TIMEOUT_MS`, default 10 000): the server cancels a statement
 *   running (or waiting for a lock) longer; the client also gives up on an answer 2 s after that, for a
 *   server that stopped answering at all;
 * - `connectTimeoutMs` (`DATABASE_CONNECT_TIMEOUT_MS`, default 5 000): opening a connection, or waiting for
 *   one from the pool when all are busy.
 */
export interface PgTimeouts {
  /** `DATABASE_STATEMENT_TIMEOUT_MS`: the longest a statement may run. */
  readonly statementTimeoutMs: number
  /** `DATABASE_CONNECT_TIMEOUT_MS`: the longest opening a connection may take. */
  readonly connectTimeoutMs: number
}

/** The default timeouts: 10 s per statement, 5 s to connect. */
export const DEFAULT_PG_TIMEOUTS: PgTimeouts = { statementTimeoutMs: 10_000, connectTimeoutMs: 5_000 }

/** Margin of the client-side read timeout over the server's statement timeout. */
const READ_MARGIN_MS = 2_000

/**
 * The connection string with the timeouts as node-postgres reads them (`statement_timeout` is sent to the
 * server at connect; `query_timeout` is the client's own). Values already in the URL win.
 */
const withTimeouts = (url: Redacted.Redacted, t: PgTimeouts): Redacted.Redacted => {
  let parsed: URL
  try {
    parsed = new URL(Redacted.value(url))
  } catch {
    // Not a URL (node-postgres also takes other forms): left as given, for the driver to judge.
    return url
  }
  if (t.statementTimeoutMs > 0) {
    if (!parsed.searchParams.has("statement_timeout")) parsed.searchParams.set("statement_timeout", String(t.statementTimeoutMs))
    if (!parsed.searchParams.has("query_timeout")) parsed.searchParams.set("query_timeout", String(t.statementTimeoutMs + READ_MARGIN_MS))
  }
  return Redacted.make(parsed.toString())
}

/** A PostgreSQL pool for the given connection string; `pool` sets the pool's size, idle time or name. */
export const pgClientForUrl = (
  url: Redacted.Redacted,
  timeouts: PgTimeouts = DEFAULT_PG_TIMEOUTS,
  pool: Pick<PgClient.PgClientConfig, "applicationName" | "maxConnections" | "idleTimeout"> = {}
) =>
  PgClient.layer({
    applicationName: APPLICATION_NAME,
    ...pool,
    url: withTimeouts(url, timeouts),
    ...(timeouts.connectTimeoutMs > 0 ? { connectTimeout: `${timeouts.connectTimeoutMs} millis` as const } : {})
  })

const milliseconds = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a whole number of milliseconds from 0 (off) to 600000`, validation: (n) => n >= 0 && n <= 600_000 })
  )

/** `DATABASE_STATEMENT_TIMEOUT_MS` and `DATABASE_CONNECT_TIMEOUT_MS`. */
export const pgTimeoutsConfig: Config.Config<PgTimeouts> = Config.all({
  statementTimeoutMs: milliseconds("DATABASE_STATEMENT_TIMEOUT_MS", DEFAULT_PG_TIMEOUTS.statementTimeoutMs),
  connectTimeoutMs: milliseconds("DATABASE_CONNECT_TIMEOUT_MS", DEFAULT_PG_TIMEOUTS.connectTimeoutMs)
})

/** A PostgreSQL pool from `DATABASE_URL` (read as a secret: it may hold a password) and the timeouts. */
export const PgClientLive = Layer.unwrapEffect(
  Effect.map(Config.all([Config.redacted("DATABASE_URL"), pgTimeoutsConfig]), ([url, timeouts]) => pgClientForUrl(url, timeouts))
)

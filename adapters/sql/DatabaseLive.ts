import { Config, Effect, Layer, Option, Redacted } from "effect"
import { pgClientForUrl, pgTimeoutsConfig } from "./PgClientLive.js"
import { PgliteEmbeddedLive } from "./PgliteEmbedded.js"

/**
 * The SqlClient the host runs on: PostgreSQL when `DATABASE_URL` is set (and not empty), otherwise the
 * embedded PGlite under `DATA_DIR` (see PgliteEmbedded.ts for its serial-transaction caveat).
 */
export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(
    Config.all([Config.option(Config.redacted("DATABASE_URL")), pgTimeoutsConfig]),
    ([url, timeouts]) =>
      Option.match(Option.filter(url, (value) => Redacted.value(value).trim() !== ""), {
        onNone: () => PgliteEmbeddedLive,
        onSome: (value) => pgClientForUrl(value, timeouts)
      })
  )
)

/**
 * Whether the host runs on a PostgreSQL server (`DATABASE_URL` set), which other hosts may share: then limits
 * are counted and writes announced in the database. The embedded PGlite serves one process only.
 */
export const sharedDatabaseConfigured: Config.Config<boolean> = Config.map(
  Config.option(Config.redacted("DATABASE_URL")),
  (url) => Option.isSome(Option.filter(url, (value) => Redacted.value(value).trim() !== ""))
)

import { PgClient } from "@effect/sql-pg"
import { Config, type Redacted } from "effect"

const APPLICATION_NAME = "repomarket"

/** A PostgreSQL pool for the given connection string. */
export const pgClientForUrl = (url: Redacted.Redacted) => PgClient.layer({ url, applicationName: APPLICATION_NAME })

/** A PostgreSQL pool from `DATABASE_URL` (read as a secret: it may hold a password). */
export const PgClientLive = PgClient.layerConfig({
  url: Config.redacted("DATABASE_URL"),
  applicationName: Config.succeed(APPLICATION_NAME)
})

import * as Migrator from "@effect/sql/Migrator"
import { Effect, Layer, Schedule } from "effect"
import initial from "./migrations/0001_initial.js"
import paymentRecovery from "./migrations/0002_payment_recovery.js"
import siwxLookup from "./migrations/0003_siwx_lookup.js"
import hostConnectionToken from "./migrations/0004_host_connection_token.js"
import listingSearch from "./migrations/0005_listing_search.js"
import rateLimits from "./migrations/0006_rate_limits.js"
import relevanceClasses from "./migrations/0007_relevance_classes.js"
import listingUpdates from "./migrations/0008_listing_updates.js"
import deliveries from "./migrations/0009_deliveries.js"
import deliveredArchives from "./migrations/0010_delivered_archives.js"

/** Every migration, bundled (no file-system loader, so a Lambda bundle carries them). Keys are `<id>_<name>`. */
export const migrations = {
  "0001_initial": initial,
  "0002_payment_recovery": paymentRecovery,
  "0003_siwx_lookup": siwxLookup,
  "0004_host_connection_token": hostConnectionToken,
  "0005_listing_search": listingSearch,
  "0006_rate_limits": rateLimits,
  "0007_relevance_classes": relevanceClasses,
  "0008_listing_updates": listingUpdates,
  "0009_deliveries": deliveries,
  "0010_delivered_archives": deliveredArchives
}

/**
 * Runs pending migrations. `Migrator.make({})` is the dialect-generic runner that `PgMigrator.run` wraps;
 * PgMigrator only adds a `pg_dump` schema dump, which needs FileSystem, Path and a CommandExecutor (a
 * `pg_dump` binary) at start-up. The runner already locks its table in PostgreSQL so hosts starting together
 * take turns; the retry covers two hosts racing to create that table on a fresh database.
 */
export const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) }).pipe(
  Effect.retry({ times: 2, schedule: Schedule.spaced("200 millis") })
)

/** Runs the migrations when the layer is built: put it before the SQL stores. */
export const MigrationsLive = Layer.effectDiscard(runMigrations)

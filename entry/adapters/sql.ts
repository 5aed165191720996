/**
 * PostgreSQL storage through `@effect/sql-pg`: every storage port, the pool, the bundled migrations, and the embedded PGlite server `npm start` uses when `DATABASE_URL` is unset.
 *
 * @packageDocumentation
 */
export { AccountStoreSql } from "../../adapters/sql/AccountStoreSql.js"
export { CredentialStoreSql } from "../../adapters/sql/CredentialStoreSql.js"
export { DatabaseLive } from "../../adapters/sql/DatabaseLive.js"
export { EmbeddedDatabaseError } from "../../adapters/sql/DataDirLock.js"
export { ListingStoreSql } from "../../adapters/sql/ListingStoreSql.js"
export { migrations, MigrationsLive, runMigrations } from "../../adapters/sql/Migrations.js"
export { OutboxSql } from "../../adapters/sql/OutboxSql.js"
export { DEFAULT_PG_TIMEOUTS, pgClientForUrl, PgClientLive, type PgTimeouts, pgTimeoutsConfig } from "../../adapters/sql/PgClientLive.js"
export { pgliteEmbedded, PgliteEmbeddedLive, type PgliteEmbeddedOptions } from "../../adapters/sql/PgliteEmbedded.js"
export { SaleLedgerSql } from "../../adapters/sql/SaleLedgerSql.js"
export { SingleUseSql } from "../../adapters/sql/SingleUseSql.js"
export { StorageSql } from "../../adapters/sql/SqlLive.js"
export { TransactorSql } from "../../adapters/sql/TransactorSql.js"
export { ListingCatalogSql } from "../../adapters/sql/ListingCatalogSql.js"
export { makeRateLimiterSql, RateLimiterSql } from "../../adapters/sql/RateLimiterSql.js"
export {
  CHANNEL as CHANGE_FEED_CHANNEL,
  ChangeFeed,
  ChangeFeedNone,
  ChangeFeedPg,
  type ChangeFeedTiming,
  type ChangeReason,
  DEFAULT_CHANGE_FEED_TIMING,
  makeChangeFeedPg
} from "../../adapters/sql/ChangeFeed.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type * from "../PortTypes.js"
export type { LimitExceeded } from "../../ports/RateLimiter.js"

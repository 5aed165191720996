import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Config } from "effect"

/** Exactly `isSelling`: live, priced, at least one payout address. The partial indexes of 0005 use it too. */
const SELLING = "l.status = 'live' AND l.price IS NOT NULL AND (l.wallet_base IS NOT NULL OR l.wallet_solana IS NOT NULL)"

/** Text search configuration: English stemming and stop words, for the document and the query alike. */
const CONFIG = "english"

/**
 * How many rows each step of a search reads row by row, in its order, before it asks an index for the rest
 * (see `exact` in Steps.ts), and how many candidates a search that must read each document checks per page.
 */
export interface RelevanceWindows {
  /** The repo name matches the whole query (relevance class 2). */
  readonly name: number
  /** The name, description and topics together match it (class 1). */
  readonly head: number
  /** Only the README makes it match (class 0): a TOASTed document read per row, so fewer. */
  readonly readme: number
  /** Any other order (newest, price, stars, relevance without text) without text: cheap rows. */
  readonly ordered?: number
  /**
   * Any other order with text: the document is read per row (from disk when it is not cached), so only a word
   * in most READMEs should fill a page here; the text index answers the others without reading a document.
   */
  readonly orderedText?: number
  /**
   * Candidates checked per page when no index can decide the text: only excluded words (`-word`), or a quoted
   * phrase, whose word order only the document itself tells. Past them the page ends early, with a cursor.
   */
  readonly capped?: number
}

/** Measured on 100 000 listings (docs/benchmarks-catalog.md): a window costs about as much as the fallback it saves. */
export const DEFAULT_RELEVANCE_WINDOWS: Required<RelevanceWindows> = {
  name: 1_000,
  head: 1_000,
  readme: 600,
  ordered: 1_000,
  orderedText: 50,
  capped: 300
}

/** Settings of the SQL catalog beyond its windows. */
export interface CatalogSqlOptions {
  /**
   * `CATALOG_STATEMENT_TIMEOUT_MS`: the longest one statement of a catalog search may run (0: only the pool's
   * `DATABASE_STATEMENT_TIMEOUT_MS`). Past it the search fails with `SearchUnavailable` (`search_too_broad`).
   */
  readonly statementTimeoutMs: number
}

/** 250 ms: about 25 times an ordinary search over 100 000 listings. */
export const DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS = 250

/** Seconds a client is told to wait after a search ran out of time. */
export const TOO_BROAD_RETRY_AFTER_SECONDS = 5

/** `CATALOG_STATEMENT_TIMEOUT_MS` (default 250; 0: only `DATABASE_STATEMENT_TIMEOUT_MS`), see `CatalogSqlOptions`. */
export const catalogStatementTimeoutConfig: Config.Config<number> = Config.integer("CATALOG_STATEMENT_TIMEOUT_MS").pipe(
  Config.withDefault(DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS),
  Config.validate({
    message: "CATALOG_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds from 0 (no bound of its own) to 600000",
    validation: (n) => n >= 0 && n <= 600_000
  })
)

/** What every part of the SQL catalog is written against: the client, its fixed fragments and the settings. */
export interface CatalogSql {
  readonly sql: SqlClient.SqlClient
  /** The text search configuration, as a literal. */
  readonly config: Fragment
  /** The condition of a selling listing (`l`), as a literal. */
  readonly selling: Fragment
  /** The windows given, over the defaults. */
  readonly sizes: Required<RelevanceWindows>
  readonly options: CatalogSqlOptions
}

/** The catalog's fixed fragments and settings on `sql`. */
export const catalogSql = (sql: SqlClient.SqlClient, windows: RelevanceWindows, options: CatalogSqlOptions): CatalogSql => ({
  sql,
  config: sql.literal(`'${CONFIG}'`),
  selling: sql.literal(SELLING),
  sizes: { ...DEFAULT_RELEVANCE_WINDOWS, ...windows },
  options
})

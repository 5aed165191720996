import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type Context, Effect, Layer } from "effect"
import { type CatalogQuery, positionOf } from "../../domain/Catalog.js"
import { SearchUnavailable } from "../../domain/Errors.js"
import type { Category } from "../../domain/rules/Category.js"
import { nameSearchText, topicsSearchText } from "../../domain/rules/SearchText.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import type { StorageError } from "../../ports/StorageError.js"
import { makeRun } from "./catalog/Search.js"
import {
  catalogSql,
  catalogStatementTimeoutConfig,
  type CatalogSqlOptions,
  DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS,
  DEFAULT_RELEVANCE_WINDOWS,
  type RelevanceWindows,
  TOO_BROAD_RETRY_AFTER_SECONDS
} from "./catalog/Settings.js"

/*
 * The catalog search on PostgreSQL. Its parts live under `catalog/`: the settings (Settings.ts), the text query
 * and the statement that prepares a search (TextQuery.ts), the row mapping (Rows.ts), the walk of each order
 * (Walks.ts), the statements of one step (Steps.ts, Checked.ts) and the plan of a search (Search.ts).
 */

export {
  catalogStatementTimeoutConfig,
  type CatalogSqlOptions,
  DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS,
  DEFAULT_RELEVANCE_WINDOWS,
  type RelevanceWindows
} from "./catalog/Settings.js"
import { fromSqlError, orStorageError } from "./StorageErrors.js"

/** The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`, with the windows given. */
export const makeListingCatalogSql = (
  windows: RelevanceWindows = DEFAULT_RELEVANCE_WINDOWS,
  options: CatalogSqlOptions = { statementTimeoutMs: DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS }
): Effect.Effect<Context.Tag.Service<typeof ListingCatalog>, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const catalog = catalogSql(sql, windows, options)
    const { config, selling } = catalog
    const run = makeRun(catalog)

    const isTimeout = (error: SqlError) => (error.cause as { readonly code?: unknown } | null)?.code === "57014"

    const search = (query: CatalogQuery) =>
      run(query).pipe(
        Effect.catchAll((error): Effect.Effect<never, SearchUnavailable | StorageError> =>
          isTimeout(error)
            ? Effect.fail(
              new SearchUnavailable({
                reason: "search_too_broad",
                retryAfterSeconds: TOO_BROAD_RETRY_AFTER_SECONDS,
                detail: "This search needed more database time than a public search may take. Narrow it (rarer words, fewer alternatives, a filter) or try again shortly."
              })
            )
            : Effect.fail(fromSqlError(error))
        ),
        Effect.map(({ entries, more, cut }) => {
          const page = entries.slice(0, query.limit)
          const last = cut ?? page[page.length - 1]
          return { entries: page, next: more && last !== undefined ? positionOf(last, query.sort) : null }
        })
      )

    const categoryCounts = sql<{ category: Category; count: number }>`
      SELECT s.category, count(*)::integer AS count
      FROM listings l JOIN listing_search s ON s.listing_id = l.id
      WHERE ${selling} GROUP BY s.category`.pipe(orStorageError)

    return {
      search,
      categoryCounts,
      describe: (listing, facts) =>
        sql`INSERT INTO listing_search (listing_id, topics, stars, category, document, head)
          SELECT ${listing.id}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(facts.topics)}::jsonb)), ${facts.stars}, ${facts.category},
            h.head || setweight(to_tsvector(${config}, ${facts.readmeText}), 'C'), h.head
          FROM (SELECT setweight(to_tsvector(${config}, ${nameSearchText(listing.repo.name)}), 'A') ||
            setweight(to_tsvector(${config}, ${`${listing.description ?? ""} ${topicsSearchText(facts.topics)}`}), 'B') AS head) h
          ON CONFLICT (listing_id) DO UPDATE SET topics = excluded.topics, stars = excluded.stars, category = excluded.category,
            document = excluded.document, head = excluded.head`.pipe(
          Effect.asVoid,
          orStorageError
        )
    }
  })

/**
 * The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`, its statements bounded by
 * `CATALOG_STATEMENT_TIMEOUT_MS` (an invalid value stops start-up).
 */
export const ListingCatalogSql = Layer.effect(
  ListingCatalog,
  Effect.flatMap(Effect.orDie(catalogStatementTimeoutConfig), (statementTimeoutMs) => makeListingCatalogSql(DEFAULT_RELEVANCE_WINDOWS, { statementTimeoutMs }))
)

import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Schema } from "effect"
import { type CatalogEntry, type CatalogPosition, type CatalogQuery, positionOf } from "../../domain/Catalog.js"
import type { Category } from "../../domain/rules/Category.js"
import { nameSearchText, topicsSearchText } from "../../domain/rules/SearchText.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingFromRow } from "./ListingRows.js"

/** Exactly `isSelling`: live, priced, at least one payout address. The partial indexes of 0005 use it too. */
const SELLING = "l.status = 'live' AND l.price IS NOT NULL AND (l.wallet_base IS NOT NULL OR l.wallet_solana IS NOT NULL)"

/** Text search configuration: English stemming and stop words, for the document and the query alike. */
const CONFIG = "english"

interface SearchRow {
  readonly s_topics: ReadonlyArray<string>
  readonly s_stars: number
  readonly s_category: Category
  readonly s_rank: number | null
}

const decodeListing = Schema.decodeUnknownSync(ListingFromRow)

/** The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`. */
export const ListingCatalogSql = Layer.effect(
  ListingCatalog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = sql.literal(`'${CONFIG}'`)
    const selling = sql.literal(SELLING)

    /** The user's words go to `websearch_to_tsquery` as a bound parameter, never into the statement text. */
    const tsquery = (text: string) => sql`websearch_to_tsquery(${config}, ${text})`
    // Ranked on `head` (name and description), never on the README: see migration 0005.
    const rankOf = (text: string) => sql`ts_rank(s.head, ${tsquery(text)})::float8`

    /** Keyset: strictly after the previous page's last (key, id) in this order. */
    const afterClause = (after: CatalogPosition, text: string | null): Fragment => {
      switch (after.sort) {
        case "relevance":
          return sql`(${rankOf(text ?? "")}, l.id) < (${after.rank}::float8, ${after.id})`
        case "newest":
          return sql`(l.created_at, l.id) < (${after.createdAt}::timestamptz, ${after.id})`
        case "price":
          return sql`(l.price, l.id) > (${after.price.toString()}::bigint, ${after.id})`
        case "stars":
          return sql`(s.stars, l.id) < (${after.stars}::integer, ${after.id})`
      }
    }

    const search = (query: CatalogQuery) => {
      const where: Array<Fragment> = [sql`${selling}`]
      if (query.text !== null) where.push(sql`s.document @@ ${tsquery(query.text)}`)
      if (query.language !== null) where.push(sql`lower(l.language) = lower(${query.language})`)
      if (query.category !== null) where.push(sql`s.category = ${query.category}`)
      if (query.topic !== null) where.push(sql`s.topics @> ARRAY[${query.topic}]::text[]`)
      if (query.chain === "base") where.push(sql`l.wallet_base IS NOT NULL`)
      if (query.chain === "solana") where.push(sql`l.wallet_solana IS NOT NULL`)
      if (query.maxPrice !== null) where.push(sql`l.price <= ${query.maxPrice.toString()}::bigint`)
      if (query.after !== null) where.push(afterClause(query.after, query.text))
      const rank = query.text === null ? sql`NULL::float8` : rankOf(query.text)
      const order = query.sort === "relevance"
        ? sql`${rank} DESC, l.id DESC`
        : query.sort === "newest" ? sql`l.created_at DESC, l.id DESC`
        : query.sort === "price" ? sql`l.price ASC, l.id ASC`
        : sql`s.stars DESC, l.id DESC`
      // One row more than asked tells whether another page follows.
      const select = sql<Record<string, unknown> & SearchRow>`
        SELECT l.*, s.topics AS s_topics, s.stars AS s_stars, s.category AS s_category, ${rank} AS s_rank
        FROM listings l JOIN listing_search s ON s.listing_id = l.id
        WHERE ${sql.and(where)}
        ORDER BY ${order}
        LIMIT ${query.limit + 1}`
      /*
       * The planner does not count reading a TOASTed document: for a text query it would rather scan every
       * row and detoast every README (100 000 of them, seconds in the benchmark) than use the GIN index, and
       * it spends parallel workers on a 21-row page. Both are turned off for this one statement only.
       */
      const settings = sql`SELECT set_config('max_parallel_workers_per_gather', '0', true),
        set_config('enable_seqscan', ${query.text === null ? "on" : "off"}, true)`
      return sql.withTransaction(Effect.zipRight(settings, select)).pipe(
        Effect.map((rows) => {
          const entries = rows.slice(0, query.limit).map((row): CatalogEntry => ({
            listing: decodeListing(row),
            facts: { topics: row.s_topics, stars: row.s_stars, category: row.s_category },
            rank: row.s_rank
          }))
          return { entries, more: rows.length > query.limit }
        }),
        Effect.orDie
      )
    }

    const categoryCounts = sql<{ category: Category; count: number }>`
      SELECT s.category, count(*)::integer AS count
      FROM listings l JOIN listing_search s ON s.listing_id = l.id
      WHERE ${selling} GROUP BY s.category`.pipe(Effect.orDie)

    return {
      search: (query) =>
        Effect.map(search(query), ({ entries, more }) => ({
          entries,
          next: more && entries.length > 0 ? positionOf(entries[entries.length - 1]!, query.sort) : null
        })),
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
          Effect.orDie
        )
    }
  })
)

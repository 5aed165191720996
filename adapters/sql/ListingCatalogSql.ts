import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { type Context, Effect, Layer, Schema } from "effect"
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

/**
 * How many of the newest listings (by id) each relevance class reads row by row before it asks its index for
 * the rest (see `relevance` below). The README class reads a TOASTed document per row, so it looks at fewer.
 */
export interface RelevanceWindows {
  /** The repo name matches the whole query (class 2). */
  readonly name: number
  /** The name, description and topics together match it (class 1). */
  readonly head: number
  /** Only the README makes it match (class 0). */
  readonly readme: number
}

/** Measured on 100 000 listings (README, "Finding listings"): a window costs about as much as the fallback it saves. */
export const DEFAULT_RELEVANCE_WINDOWS: RelevanceWindows = { name: 1_000, head: 1_000, readme: 600 }

/**
 * `-` opens an excluded word at the start of a word in web-search syntax. A query with one may match a name
 * or description that the whole document does not match (the excluded word in the README), so its classes
 * also check the document; a false positive here only costs speed.
 */
const hasExclusion = (text: string) => /(^|[^\p{L}\p{N}])-/u.test(text)

/** The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`, with the relevance windows given. */
export const makeListingCatalogSql = (
  windows: RelevanceWindows = DEFAULT_RELEVANCE_WINDOWS
): Effect.Effect<Context.Tag.Service<typeof ListingCatalog>, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = sql.literal(`'${CONFIG}'`)
    const selling = sql.literal(SELLING)

    /** The user's words go to `websearch_to_tsquery` as a bound parameter, never into the statement text. */
    const tsquery = (text: string) => sql`websearch_to_tsquery(${config}, ${text})`

    /**
     * Keyset: strictly after the previous page's last (key, id) in this order. Relevance with text has its
     * own walk; relevance without text (which the use case turns into `newest`) has no rank: by id alone.
     */
    const afterClause = (after: CatalogPosition): Fragment => {
      switch (after.sort) {
        case "relevance":
          return sql`l.id < ${after.id}`
        case "newest":
          return sql`(l.created_at, l.id) < (${after.createdAt}::timestamptz, ${after.id})`
        case "price":
          return sql`(l.price, l.id) > (${after.price.toString()}::bigint, ${after.id})`
        case "stars":
          return sql`(s.stars, l.id) < (${after.stars}::integer, ${after.id})`
      }
    }

    /** The filters other than the text: they apply in every order. */
    const filtersOf = (query: CatalogQuery): Array<Fragment> => {
      const where: Array<Fragment> = [sql`${selling}`]
      if (query.language !== null) where.push(sql`lower(l.language) = lower(${query.language})`)
      if (query.category !== null) where.push(sql`s.category = ${query.category}`)
      if (query.topic !== null) where.push(sql`s.topics @> ARRAY[${query.topic}]::text[]`)
      if (query.chain === "base") where.push(sql`l.wallet_base IS NOT NULL`)
      if (query.chain === "solana") where.push(sql`l.wallet_solana IS NOT NULL`)
      if (query.maxPrice !== null) where.push(sql`l.price <= ${query.maxPrice.toString()}::bigint`)
      return where
    }

    const columns = (rank: Fragment) => sql`l.*, s.topics AS s_topics, s.stars AS s_stars, s.category AS s_category, ${rank} AS s_rank`

    const toEntry = (row: Record<string, unknown> & SearchRow): CatalogEntry => ({
      listing: decodeListing(row),
      facts: { topics: row.s_topics, stars: row.s_stars, category: row.s_category },
      rank: row.s_rank
    })

    /*
     * The planner does not count reading a TOASTed document: for a text query it would rather scan every
     * row and detoast every README than use the GIN index, and it spends parallel workers on a 21-row page
     * (`language` + `stars`: 8 ms without them, 160 ms with). Both are turned off for the statements of one
     * search only, in a transaction of their own. A relevance search also turns off hash joins: the planner
     * joined a rare README word's GIN matches to the window by hashing, reading every match twice (again in the
     * fallback) instead of walking the window by id (p50 14 → 13 ms, p99 27.6 → 20–22 ms over 100 000 listings).
     */
    const withSettings = <A, E, R>(text: string | null, relevance: boolean, body: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.zipRight(
        sql`SELECT set_config('max_parallel_workers_per_gather', '0', true),
          set_config('enable_seqscan', ${text === null ? "on" : "off"}, true),
          set_config('enable_hashjoin', ${relevance ? "off" : "on"}, true)`,
        body
      ))

    /** Every order but relevance: one statement, the text (if any) as a filter. */
    const ordered = (query: CatalogQuery) => {
      const where = filtersOf(query)
      if (query.text !== null) where.push(sql`s.document @@ ${tsquery(query.text)}`)
      if (query.after !== null) where.push(afterClause(query.after))
      const order = query.sort === "newest" ? sql`l.created_at DESC, l.id DESC`
        : query.sort === "price" ? sql`l.price ASC, l.id ASC`
        : query.sort === "stars" ? sql`s.stars DESC, l.id DESC`
        : sql`l.id DESC`
      // One row more than asked tells whether another page follows.
      return sql<Record<string, unknown> & SearchRow>`
        SELECT ${columns(sql`NULL::float8`)}
        FROM listings l JOIN listing_search s ON s.listing_id = l.id
        WHERE ${sql.and(where)}
        ORDER BY ${order}
        LIMIT ${query.limit + 1}`.pipe(Effect.map((rows) => rows.map(toEntry)))
    }

    /*
     * Relevance comes in three classes, highest first: 2 when the repo name alone matches the whole query,
     * 1 when the name, description and topics together do, 0 when only the README makes it match; within a
     * class, by id (descending). Ranking with `ts_rank` needed every match's rank before the first row (a
     * word in most READMEs: 1.3 s over 100 000 listings); classes need no rank, only the order of ids.
     *
     * Each class is read in two steps, in one statement. First the `window` newest ids (an index-only walk of the primary key)
     * are checked row by row: a word in more than a few percent of the listings fills the page there. Only
     * when it does not is the class's GIN index asked for every match below the window, which is then few.
     * A window alone is slow for a rare word (every row read to find none) and the index alone for a common
     * one (every match fetched and sorted to keep 21); together neither grows past a few milliseconds here.
     */
    const relevance = (query: CatalogQuery, text: string) =>
      Effect.gen(function*() {
        const q = tsquery(text)
        const name = sql`ts_filter(s.head, '{a}') @@ ${q}`
        const head = sql`s.head @@ ${q}`
        const document = sql`s.document @@ ${q}`
        const classes: ReadonlyArray<readonly [number, Fragment, number]> = hasExclusion(text)
          ? [
            [2, sql`${name} AND ${document}`, windows.name],
            [1, sql`${head} AND NOT ${name} AND ${document}`, windows.head],
            [0, sql`${document} AND NOT ${head} AND NOT ${name}`, windows.readme]
          ]
          // Without an excluded word, a name match is a head match and a head match a document match.
          : [
            [2, name, windows.name],
            [1, sql`${head} AND NOT ${name}`, windows.head],
            [0, sql`${document} AND NOT ${head}`, windows.readme]
          ]
        const filters = filtersOf(query)
        const after = query.after?.sort === "relevance" ? query.after : null
        const want = query.limit + 1
        const found: Array<CatalogEntry> = []
        for (const [rank, matches, window] of classes) {
          if (found.length >= want) break
          if (after !== null && rank > after.rank) continue
          const below = after !== null && rank === after.rank ? sql`listing_id < ${after.id}` : sql`TRUE`
          const need = want - found.length
          const filtered = sql.and([...filters, matches])
          // The window stays a subquery (not a CTE) in `hits`, so its id order carries through the joins and
          // the walk stops at the `need`-th match instead of checking the whole window.
          const newest = sql`SELECT listing_id FROM listing_search WHERE ${below} ORDER BY listing_id DESC LIMIT ${window}`
          // One statement per class: the window's matches, and (only when they are too few and the window was
          // full: both one-time filters, so otherwise that scan never runs) the index's matches below the
          // window, materialized so the planner cannot turn back to walking ids, sorted before the joins so
          // they stop once the page is full.
          const rows = yield* sql<Record<string, unknown> & SearchRow>`
            WITH hits AS MATERIALIZED (
              SELECT ${columns(sql`${rank}::float8`)}
              FROM (${newest}) w JOIN listing_search s ON s.listing_id = w.listing_id JOIN listings l ON l.id = w.listing_id
              WHERE ${filtered} ORDER BY l.id DESC LIMIT ${need}),
            m AS MATERIALIZED (
              SELECT s.listing_id FROM listing_search s
              WHERE (SELECT count(*) FROM hits) < ${need} AND (SELECT count(*) FROM (${newest}) c) = ${window}
                AND s.listing_id < (SELECT min(listing_id) FROM (${newest}) e) AND ${matches})
            SELECT * FROM hits
            UNION ALL
            (SELECT ${columns(sql`${rank}::float8`)}
              FROM (SELECT listing_id FROM m ORDER BY listing_id DESC) m
                JOIN listings l ON l.id = m.listing_id JOIN listing_search s ON s.listing_id = m.listing_id
              WHERE ${sql.and(filters)} ORDER BY m.listing_id DESC LIMIT ${need})
            ORDER BY id DESC LIMIT ${need}`
          found.push(...rows.map(toEntry))
        }
        return found
      })

    const search = (query: CatalogQuery) =>
      withSettings(
        query.text,
        query.sort === "relevance" && query.text !== null,
        query.sort === "relevance" && query.text !== null ? relevance(query, query.text) : ordered(query)
      ).pipe(
        Effect.map((rows) => ({ entries: rows.slice(0, query.limit), more: rows.length > query.limit })),
        Effect.orDie
      )

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

/** The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`. */
export const ListingCatalogSql = Layer.effect(ListingCatalog, makeListingCatalogSql())

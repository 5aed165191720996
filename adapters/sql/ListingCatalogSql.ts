import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Config, type Context, Effect, Layer, Schema } from "effect"
import { type CatalogEntry, type CatalogPosition, type CatalogQuery, type CatalogSort, positionOf } from "../../model/Catalog.js"
import { SearchUnavailable } from "../../model/Errors.js"
import type { Category } from "../../model/rules/Category.js"
import { nameSearchText, topicsSearchText } from "../../model/rules/SearchText.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingFromRow } from "./ListingRows.js"

/** Exactly `isSelling`: live, priced, at least one payout address. The partial indexes of 0005 use it too. */
const SELLING = "l.status = 'live' AND l.price IS NOT NULL AND (l.wallet_base IS NOT NULL OR l.wallet_solana IS NOT NULL)"

/** Text search configuration: English stemming and stop words, for the document and the query alike. */
const CONFIG = "english"

interface SearchRow {
  readonly id: string
  readonly s_topics: ReadonlyArray<string>
  readonly s_stars: number
  readonly s_category: Category
  readonly s_rank: number | null
}

type Row = Record<string, unknown> & SearchRow

const decodeListing = Schema.decodeUnknownSync(ListingFromRow)

/**
 * How many rows each step of a search reads row by row, in its order, before it asks an index for the rest
 * (see `exact` below), and how many candidates a search that must read each document checks per page.
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
const TOO_BROAD_RETRY_AFTER_SECONDS = 5

/**
 * Reads a tsquery's text form (lexemes in single quotes, `''` inside them; operators `& | ! ( ) <-> <N>`)
 * outside its quoted lexemes: `onOperator` sees each character there and returns what replaces it.
 */
const outsideLexemes = (tsquery: string, onOperator: (rest: string) => { readonly take: number; readonly put: string }): string => {
  let out = ""
  let quoted = false
  for (let i = 0; i < tsquery.length;) {
    const c = tsquery[i]!
    if (c === "'") {
      // '' inside a lexeme is a quote in it, not its end.
      if (quoted && tsquery[i + 1] === "'") {
        out += "''"
        i += 2
        continue
      }
      quoted = !quoted
      out += c
      i++
      continue
    }
    if (quoted) {
      out += c
      i++
      continue
    }
    const { take, put } = onOperator(tsquery.slice(i))
    out += put
    i += take
  }
  return out
}

const PHRASE_OPERATOR = /^<(-|\d+)>/

/** Whether a tsquery has a phrase operator (`<->`, `<N>`), which its GIN index can only approximate. */
const hasPhrase = (tsquery: string): boolean => {
  let found = false
  outsideLexemes(tsquery, (rest) => {
    const m = PHRASE_OPERATOR.exec(rest)
    if (m !== null) found = true
    return { take: 1, put: "" }
  })
  return found
}

/** Whether a tsquery excludes a word (`!`), so a match of the name alone does not make a match of the document. */
const hasNegation = (tsquery: string): boolean => {
  let found = false
  outsideLexemes(tsquery, (rest) => {
    if (rest.startsWith("!")) found = true
    return { take: 1, put: "" }
  })
  return found
}

/** The tsquery with every phrase operator made `&`: true of every document the phrase is, and exact in its index. */
const withoutPhrases = (tsquery: string): string =>
  outsideLexemes(tsquery, (rest) => {
    const m = PHRASE_OPERATOR.exec(rest)
    return m === null ? { take: 1, put: rest[0]! } : { take: m[0].length, put: "&" }
  })

/**
 * A condition on a catalog row: `cheap` reads only the row (its inline `head`), `document` the TOASTed document.
 * `indexed`: `cheap` is a text condition the head's own indexes answer (the name, the head), matching few rows.
 */
interface Match {
  readonly cheap: Fragment
  readonly document: Fragment | null
  readonly indexed?: boolean
}

/**
 * Below this many rows estimated to pass the filters (beyond a window), a step that reads documents reads one
 * for each of them; above it, it asks the text's indexes (see `beyond`). 1 000 documents are about 20 ms.
 */
const FILTER_FIRST = 1_000

/**
 * One order of the catalog as the SQL walks it. `window` names the first rows in this order after the
 * keyset position (ids in `w.id`, with the order's key beside them so the order carries through the joins);
 * `last` the last of them; `beyondOf` is true of the rows after a given one.
 */
interface Walk {
  /** The first `size` rows in this order after the position: `id` and the key columns. */
  readonly window: (size: number) => Fragment
  /** The `size`-th row in this order after the position, `id` (no row when there are fewer). */
  readonly last: (size: number) => Fragment
  /** True of a row (aliases `l`, `s`) after `row` in this order. */
  readonly beyondOf: (row: Row) => Fragment
  /** The order over the window's `w`. */
  readonly windowOrder: Fragment
  /** The order over the output columns (`l.*`, `s_stars`). */
  readonly outputOrder: Fragment
  /** The key columns a fallback keeps per row (aliases `l`, `s`), named as in the output. */
  readonly keyColumns: Fragment
  /** The order over those kept columns. */
  readonly keptOrder: Fragment
  /** The kept columns (`id` and the key) of the ids of a table `t` (`id`, `s_stars`), in this order. */
  readonly sorted: (t: Fragment) => Fragment
  /** The order is by id alone (relevance within a class, or without text). */
  readonly byId: boolean
  /** The keyset position as a condition on `l` and `s` (TRUE on the first page). */
  readonly position: Fragment
  /** The order over `l` and `s`. */
  readonly order: Fragment
}

/** The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`, with the windows given. */
export const makeListingCatalogSql = (
  windows: RelevanceWindows = DEFAULT_RELEVANCE_WINDOWS,
  options: CatalogSqlOptions = { statementTimeoutMs: DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS }
): Effect.Effect<Context.Tag.Service<typeof ListingCatalog>, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = sql.literal(`'${CONFIG}'`)
    const selling = sql.literal(SELLING)
    const sizes = { ...DEFAULT_RELEVANCE_WINDOWS, ...windows }

    /*
     * The walks of each order. Relevance is by id within a class (and without text); `newest` and `price`
     * walk the partial indexes of selling listings, `stars` its index over every catalog row.
     */
    const walkOf = (sort: CatalogSort, after: CatalogPosition | null, rankBelow: Fragment | null): Walk => {
      switch (sort) {
        case "relevance": {
          const below = rankBelow ?? sql`TRUE`
          const from = sql`FROM listing_search s WHERE ${below} ORDER BY s.listing_id DESC`
          return {
            window: (size) => sql`SELECT s.listing_id AS id ${from} LIMIT ${size}`,
            last: (size) => sql`SELECT s.listing_id AS id ${from} OFFSET ${size - 1} LIMIT 1`,
            beyondOf: (row) => sql`s.listing_id < ${row.id}`,
            windowOrder: sql`w.id DESC`,
            outputOrder: sql`id DESC`,
            keyColumns: sql`l.id`,
            keptOrder: sql`id DESC`,
            sorted: (t) => sql`SELECT t.id FROM ${t} t ORDER BY t.id DESC`,
            byId: true,
            position: below,
            order: sql`l.id DESC`
          }
        }
        case "newest": {
          const position = after?.sort === "newest" ? sql`(l.created_at, l.id) < (${after.createdAt}::timestamptz, ${after.id})` : sql`TRUE`
          const from = sql`FROM listings l WHERE ${selling} AND ${position} ORDER BY l.created_at DESC, l.id DESC`
          return {
            window: (size) => sql`SELECT l.id, l.created_at ${from} LIMIT ${size}`,
            last: (size) => sql`SELECT l.id ${from} OFFSET ${size - 1} LIMIT 1`,
            beyondOf: (row) => sql`(l.created_at, l.id) < (${row.created_at as Date}::timestamptz, ${row.id})`,
            windowOrder: sql`w.created_at DESC, w.id DESC`,
            outputOrder: sql`created_at DESC, id DESC`,
            keyColumns: sql`l.id, l.created_at`,
            keptOrder: sql`created_at DESC, id DESC`,
            sorted: (t) => sql`SELECT l.id, l.created_at FROM ${t} t JOIN listings l ON l.id = t.id ORDER BY l.created_at DESC, l.id DESC`,
            byId: false,
            position,
            order: sql`l.created_at DESC, l.id DESC`
          }
        }
        case "price": {
          const position = after?.sort === "price" ? sql`(l.price, l.id) > (${after.price.toString()}::bigint, ${after.id})` : sql`TRUE`
          const from = sql`FROM listings l WHERE ${selling} AND ${position} ORDER BY l.price ASC, l.id ASC`
          return {
            window: (size) => sql`SELECT l.id, l.price ${from} LIMIT ${size}`,
            last: (size) => sql`SELECT l.id ${from} OFFSET ${size - 1} LIMIT 1`,
            beyondOf: (row) => sql`(l.price, l.id) > (${String(row.price)}::bigint, ${row.id})`,
            windowOrder: sql`w.price ASC, w.id ASC`,
            outputOrder: sql`price ASC, id ASC`,
            keyColumns: sql`l.id, l.price`,
            keptOrder: sql`price ASC, id ASC`,
            sorted: (t) => sql`SELECT l.id, l.price FROM ${t} t JOIN listings l ON l.id = t.id ORDER BY l.price ASC, l.id ASC`,
            byId: false,
            position,
            order: sql`l.price ASC, l.id ASC`
          }
        }
        case "stars": {
          const position = after?.sort === "stars" ? sql`(s.stars, s.listing_id) < (${after.stars}::integer, ${after.id})` : sql`TRUE`
          const from = sql`FROM listing_search s WHERE ${position} ORDER BY s.stars DESC, s.listing_id DESC`
          return {
            window: (size) => sql`SELECT s.listing_id AS id, s.stars ${from} LIMIT ${size}`,
            last: (size) => sql`SELECT s.listing_id AS id ${from} OFFSET ${size - 1} LIMIT 1`,
            beyondOf: (row) => sql`(s.stars, s.listing_id) < (${row.s_stars}::integer, ${row.id})`,
            windowOrder: sql`w.stars DESC, w.id DESC`,
            outputOrder: sql`s_stars DESC, id DESC`,
            keyColumns: sql`l.id, s.stars AS s_stars`,
            keptOrder: sql`s_stars DESC, id DESC`,
            sorted: (t) => sql`SELECT t.id, t.s_stars FROM ${t} t ORDER BY t.s_stars DESC, t.id DESC`,
            byId: false,
            position,
            order: sql`s.stars DESC, s.listing_id DESC`
          }
        }
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

    const toEntry = (row: Row): CatalogEntry => ({
      listing: decodeListing(row),
      facts: { topics: row.s_topics, stars: row.s_stars, category: row.s_category },
      rank: row.s_rank
    })

    /*
     * The listing and catalog row of one id, as `l` and `s`, each read by its primary key (lateral subqueries
     * fenced by OFFSET 0): the conditions on them are then checked on that row, never turned into a scan of an
     * index of their own (the text index, a filter's) once per id.
     */
    const rowOf = (id: Fragment) => sql`
      CROSS JOIN LATERAL (SELECT * FROM listings l WHERE l.id = ${id} OFFSET 0) l
      CROSS JOIN LATERAL (SELECT * FROM listing_search s WHERE s.listing_id = ${id} OFFSET 0) s`

    /*
     * The document is read last, only for a row that passed everything else: PostgreSQL orders conditions by
     * their cost alone, and counts `document @@` as cheaper than `ts_filter(head) @@`; only CASE keeps the order.
     */
    const rowChecks = (filters: ReadonlyArray<Fragment>, match: Match) => {
      const rest = sql.and([...filters, match.cheap])
      return match.document === null ? rest : sql`${rest} AND CASE WHEN ${rest} THEN ${match.document} ELSE FALSE END`
    }

    /*
     * One step of a search: the first `need` rows of `walk`'s order that pass the filters and `match`.
     * 1. The window: the first `window` rows of the order (whatever the filters), each read and checked in order,
     *    stopping at the `need`-th match. A condition true of more than a few percent of the listings fills the
     *    page here, whatever the indexes would say. The window stays a subquery (not a CTE), so its order carries
     *    through the joins. The same statement gives the window's last row when it was full and the page not.
     * 2. Only then, a second statement (`beyond`): every row after that last one that passes the filters and
     *    `match`, with no order and no limit, so no plan can walk the order to its end; then the first of them
     *    in order. The matches are few there, or the window would have filled.
     */
    const exact = (walk: Walk, filters: ReadonlyArray<Fragment>, match: Match, rank: Fragment, window: number, need: number) =>
      Effect.gen(function*() {
        if (match.indexed === true && match.document === null) return yield* indexed(walk, filters, match, rank, window, need)
        if (walk.byId && filters.length === 1 && match.document !== null && match.indexed !== true) {
          return yield* unfiltered(walk, match, filters, rank, window, need)
        }
        // A name or head condition is joined to the window through its own index (few rows match either: 0.1 ms,
        // where reading the window's rows one by one is 2 ms); its document is read only for the rows it keeps.
        const rows = match.indexed === true
          ? sql`JOIN listings l ON l.id = w.id JOIN listing_search s ON s.listing_id = w.id`
          : rowOf(sql`w.id`)
        const found = yield* sql<Row & { readonly s_last: boolean }>`
          WITH hits AS MATERIALIZED (
            SELECT ${columns(rank)}, FALSE AS s_last FROM (${walk.window(window)}) w ${rows}
            WHERE ${rowChecks(filters, match)} ORDER BY ${walk.windowOrder} LIMIT ${need})
          SELECT * FROM hits
          UNION ALL
          SELECT ${columns(rank)}, TRUE AS s_last
          FROM (${walk.last(window)}) b JOIN listings l ON l.id = b.id JOIN listing_search s ON s.listing_id = b.id
          WHERE (SELECT count(*) FROM hits) < ${need}
          ORDER BY s_last, ${walk.outputOrder}`
        const hits = found.filter((r) => !r.s_last)
        const last = found.find((r) => r.s_last)
        if (hits.length >= need || last === undefined) return hits
        return [...hits, ...(yield* beyond(walk, filters, match, rank, window, last, need - hits.length))]
      })

    /*
     * `exact` for the README class of a search with no filter of its own (a README word alone, the usual
     * search), in one statement as the two of `exact` and `beyond` would be: with every row passing the filters,
     * the rows below the window come from the text's indexes, never a document read, in id order, each read
     * until enough are selling. A second statement would only add its round trip and its planning.
     */
    const unfiltered = (walk: Walk, match: Match, filters: ReadonlyArray<Fragment>, rank: Fragment, window: number, need: number) =>
      sql<Row>`
        WITH hits AS MATERIALIZED (
          SELECT ${columns(rank)} FROM (${walk.window(window)}) w ${rowOf(sql`w.id`)}
          WHERE ${rowChecks(filters, match)} ORDER BY ${walk.windowOrder} LIMIT ${need}),
        b AS MATERIALIZED (${walk.last(window)}),
        t AS MATERIALIZED (
          SELECT s.listing_id AS id FROM listing_search s
          WHERE (SELECT count(*) FROM hits) < ${need} AND EXISTS (SELECT 1 FROM b) AND ${match.cheap} AND ${match.document}),
        m AS MATERIALIZED (
          SELECT k.id FROM (SELECT t.id FROM t WHERE t.id < (SELECT id FROM b) ORDER BY t.id DESC) k ${rowOf(sql`k.id`)}
          WHERE ${sql.and([...filters, match.cheap])} LIMIT ${need})
        SELECT * FROM hits
        UNION ALL
        (SELECT ${columns(rank)} FROM m JOIN listings l ON l.id = m.id JOIN listing_search s ON s.listing_id = m.id
          ORDER BY ${walk.outputOrder} LIMIT ${need})
        ORDER BY ${walk.outputOrder} LIMIT ${need}`

    /*
     * `exact` for a relevance class whose condition is on the name or the head alone (classes 2 and 1 without an
     * excluded word), in one statement: the window is joined to the rows of the head's own indexes (few rows
     * match either: 0.1 ms, where reading the window row by row is 2 ms), and the rows below the window come from
     * those indexes too (never a document read), only when the window was full and did not fill the page (both
     * one-time filters). Rare names are the usual case here, so a second statement would only add its time.
     */
    const indexed = (walk: Walk, filters: ReadonlyArray<Fragment>, match: Match, rank: Fragment, window: number, need: number) => {
      const checks = rowChecks(filters, match)
      return sql<Row>`
        WITH hits AS MATERIALIZED (
          SELECT ${columns(rank)} FROM (${walk.window(window)}) w JOIN listings l ON l.id = w.id JOIN listing_search s ON s.listing_id = w.id
          WHERE ${checks} ORDER BY ${walk.windowOrder} LIMIT ${need}),
        b AS MATERIALIZED (${walk.last(window)}),
        m AS MATERIALIZED (
          SELECT ${walk.keyColumns} FROM listings l JOIN listing_search s ON s.listing_id = l.id
          WHERE (SELECT count(*) FROM hits) < ${need} AND EXISTS (SELECT 1 FROM b) AND s.listing_id < (SELECT id FROM b) AND ${checks})
        SELECT * FROM hits
        UNION ALL
        (SELECT ${columns(rank)}
          FROM (SELECT * FROM m ORDER BY ${walk.keptOrder} LIMIT ${need}) m
            JOIN listings l ON l.id = m.id JOIN listing_search s ON s.listing_id = m.id
          ORDER BY ${walk.outputOrder} LIMIT ${need})
        ORDER BY ${walk.outputOrder} LIMIT ${need}`
    }

    /*
     * The rows after `last` in `walk`'s order that pass the filters and `match`, the first `need` of them. When
     * `match` reads no document, the planner answers it from the most selective index (the text's, a filter's).
     * When it does (a README word, an excluded word), it is not left to the planner, which counts reading a
     * TOASTed document as free and so would read one for each row of a filter many listings pass (`word -other`
     * with `language=rust`: 8 000 documents, 250 ms). How many rows pass the filters is estimated from the window
     * instead (how many of its rows did, scaled to the table): when few (FILTER_FIRST at most) the filters come
     * first and the document is read for each of their rows (a language nobody uses: none); otherwise the text's
     * indexes give every match (no document read), then the filters.
     */
    const beyond = (walk: Walk, filters: ReadonlyArray<Fragment>, match: Match, rank: Fragment, window: number, last: Row, need: number) => {
      const after = walk.beyondOf(last)
      const m = match.document === null
        ? sql`
          m AS MATERIALIZED (
            SELECT ${walk.keyColumns} FROM listings l JOIN listing_search s ON s.listing_id = l.id
            WHERE ${after} AND ${rowChecks(filters, match)})`
        : sql`
          passed AS MATERIALIZED (
            SELECT count(*) AS n FROM (${walk.window(window)}) w ${rowOf(sql`w.id`)} WHERE ${sql.and(filters)}),
          few AS MATERIALIZED (
            -- Without a filter of its own (only "selling") every row passes, and the name's or the head's matches
            -- (with their index) are few: then the text's indexes go first.
            SELECT ${sql.literal(filters.length > 1 && match.indexed !== true ? "TRUE" : "FALSE")} AND (SELECT n FROM passed)::float8 / ${window}
              * GREATEST((SELECT reltuples FROM pg_class WHERE oid = 'listing_search'::regclass), ${window}) <= ${FILTER_FIRST} AS yes),
          f AS MATERIALIZED (
            SELECT l.id FROM listings l JOIN listing_search s ON s.listing_id = l.id
            WHERE (SELECT yes FROM few) AND ${after} AND ${sql.and(filters)}),
          t AS MATERIALIZED (
            SELECT s.listing_id AS id, s.stars AS s_stars FROM listing_search s
            WHERE NOT (SELECT yes FROM few) AND ${match.cheap} AND ${match.document}),
          m AS MATERIALIZED (
            SELECT ${walk.keyColumns} FROM f ${rowOf(sql`f.id`)} WHERE ${rowChecks([], match)}
            UNION ALL
            -- The text's matches in order, each read until enough pass the filters.
            (SELECT k.* FROM (${walk.sorted(sql`t`)}) k ${rowOf(sql`k.id`)}
              WHERE ${after} AND ${sql.and([...filters, match.cheap])} LIMIT ${need}))`
      return sql<Row>`
        WITH ${m}
        SELECT ${columns(rank)}
        FROM (SELECT * FROM m ORDER BY ${walk.keptOrder} LIMIT ${need}) m
          JOIN listings l ON l.id = m.id JOIN listing_search s ON s.listing_id = m.id
        ORDER BY ${walk.outputOrder}`
    }

    /*
     * A step whose condition only the document itself can decide (`check`: only excluded words, or a quoted
     * phrase): first up to `capped` + 1 candidates in order, found as `exact` finds rows, by `candidate` (true of
     * every row `check` is, and cheap: the filters, an index-exact form of the text), then `check` on the first
     * `capped` of them in order, one document read each, stopping at the `want`-th match. Returned: the matches,
     * and the `capped`-th candidate when all were checked and more follow, so the page can end there.
     */
    interface Checked {
      readonly rows: ReadonlyArray<Row>
      /** The last candidate checked, when more candidates follow it: the page ends there. */
      readonly cut: Row | null
    }
    const checked = (
      walkAfter: (row: Row | null) => Walk,
      filters: ReadonlyArray<Fragment>,
      candidate: Match,
      check: Fragment,
      rank: Fragment,
      window: number,
      want: number
    ) =>
      Effect.gen(function*() {
        const rows: Array<Row> = []
        let from: Row | null = null
        let left = sizes.capped
        // A first few (the page twice over: most exclusions pass most candidates), then the rest of `capped`.
        for (let take = Math.min(left, 2 * want); ; take = left) {
          const candidates: ReadonlyArray<Row> = yield* exact(walkAfter(from), filters, candidate, rank, window, take + 1)
          const checkable: ReadonlyArray<Row> = candidates.slice(0, take)
          if (checkable.length === 0) return { rows, cut: null } satisfies Checked
          // In the candidates' order (the function scan's, kept by the lateral join), stopping at `want` matches.
          const passed = yield* sql<{ readonly n: string | number }>`
            SELECT c.n FROM unnest(${checkable.map((r) => r.id)}::text[]) WITH ORDINALITY AS c(id, n)
              CROSS JOIN LATERAL (SELECT * FROM listing_search s WHERE s.listing_id = c.id OFFSET 0) s
            WHERE ${check} LIMIT ${want - rows.length}`
          rows.push(...passed.map((r) => Number(r.n)).sort((a, b) => a - b).map((n) => checkable[n - 1]!))
          left -= checkable.length
          if (rows.length >= want || candidates.length <= take) return { rows, cut: null } satisfies Checked
          if (left <= 0) return { rows, cut: checkable[checkable.length - 1]! } satisfies Checked
          from = checkable[checkable.length - 1]!
        }
      })

    /** The tsquery of the search, as PostgreSQL made it from the words: bound as text, never in the statement. */
    interface Text {
      /** `websearch_to_tsquery` of the words, as text. */
      readonly full: string
      /** Its part an index can answer (`querytree`): `T` when none can (only excluded words), empty for no words. */
      readonly tree: string
    }

    const tsq = (text: string) => sql`${text}::tsquery`

    interface Found {
      readonly entries: ReadonlyArray<CatalogEntry>
      /** More follow: after the last entry, or after `cut` when the page ended early. */
      readonly more: boolean
      readonly cut: CatalogEntry | null
    }

    /*
     * Relevance comes in three classes, highest first: 2 when the repo name alone matches the whole query,
     * 1 when the name, description and topics together do, 0 when only the README makes it match; within a
     * class, by id (descending). Ranking with `ts_rank` needed every match's rank before the first row (a
     * word in most READMEs: 1.3 s over 100 000 listings); classes need no rank, only the order of ids.
     * Each class is one `exact` step (its window, then its index below the window), or, for a quoted phrase,
     * one `checked` step over the index-exact form of the phrase (every word of it, in any order).
     */
    const relevance = (query: CatalogQuery, text: Text) =>
      Effect.gen(function*() {
        const q = tsq(text.full)
        const phrase = hasPhrase(text.full)
        const loose = tsq(withoutPhrases(text.tree))
        const name = (t: Fragment) => sql`ts_filter(s.head, '{a}') @@ ${t}`
        const head = (t: Fragment) => sql`s.head @@ ${t}`
        const document = (t: Fragment) => sql`s.document @@ ${t}`
        // A query with an excluded word may match a name or description that the whole document does not
        // match (the excluded word in the README), so its classes also check the document. Without one, a
        // name match is a head match and a head match a document match.
        const excludes = hasNegation(text.full)
        const classes: ReadonlyArray<{ rank: number; match: Match; candidate: Match; check: Fragment; window: number }> = [
          {
            rank: 2,
            match: { cheap: name(q), document: excludes ? document(q) : null, indexed: true },
            candidate: { cheap: name(loose), document: null, indexed: true },
            check: excludes ? sql`${name(q)} AND ${document(q)}` : name(q),
            window: sizes.name
          },
          {
            rank: 1,
            match: { cheap: sql`${head(q)} AND NOT ${name(q)}`, document: excludes ? document(q) : null, indexed: true },
            candidate: { cheap: sql`${head(loose)} AND NOT ${name(q)}`, document: null, indexed: true },
            check: excludes ? sql`${head(q)} AND ${document(q)}` : head(q),
            window: sizes.head
          },
          {
            rank: 0,
            match: { cheap: excludes ? sql`NOT ${head(q)} AND NOT ${name(q)}` : sql`NOT ${head(q)}`, document: document(q) },
            candidate: { cheap: sql`NOT ${head(q)}`, document: document(loose) },
            check: document(q),
            window: sizes.readme
          }
        ]
        const filters = filtersOf(query)
        const after = query.after?.sort === "relevance" ? query.after : null
        const want = query.limit + 1
        const found: Array<CatalogEntry> = []
        for (const c of classes) {
          if (found.length >= want) break
          if (after !== null && c.rank > after.rank) continue
          const below = after !== null && c.rank === after.rank ? sql`s.listing_id < ${after.id}` : null
          const walk = walkOf("relevance", null, below)
          const rank = sql`${c.rank}::float8`
          if (!phrase) {
            found.push(...(yield* exact(walk, filters, c.match, rank, c.window, want - found.length)).map(toEntry))
            continue
          }
          const step = yield* checked(
            (row) => row === null ? walk : walkOf("relevance", null, sql`s.listing_id < ${row.id}`),
            filters, c.candidate, c.check, rank, c.window, want - found.length
          )
          found.push(...step.rows.map(toEntry))
          if (step.cut !== null) return { entries: found, more: true, cut: toEntry(step.cut) } satisfies Found
        }
        return { entries: found.slice(0, want), more: found.length >= want, cut: null } satisfies Found
      })

    /*
     * Every other order (and relevance without text, by id), one step: the text, if any, a condition beside
     * the filters. A text no index can decide (only excluded words), or a quoted phrase, is checked on
     * candidates (every listing passing the filters; for a phrase, every one holding all of its words).
     */
    const ordered = (query: CatalogQuery, text: Text | null) =>
      Effect.gen(function*() {
        const walk = walkOf(query.sort, query.after, query.sort === "relevance" && query.after?.sort === "relevance" ? sql`s.listing_id < ${query.after.id}` : null)
        const filters = filtersOf(query)
        const want = query.limit + 1
        const rank = sql`NULL::float8`
        if (text === null && filters.length === 1) {
          // Nothing but "selling": every row of the order's index (of selling listings, or of the catalog for
          // stars) passes, so the walk stops at once.
          const rows = yield* sql<Row>`
            SELECT ${columns(rank)} FROM listings l JOIN listing_search s ON s.listing_id = l.id
            WHERE ${selling} AND ${walk.position} ORDER BY ${walk.order} LIMIT ${want}`
          return { entries: rows.map(toEntry), more: rows.length >= want, cut: null } satisfies Found
        }
        if (text === null) {
          const rows = yield* exact(walk, filters, { cheap: sql`TRUE`, document: null }, rank, sizes.ordered, want)
          return { entries: rows.map(toEntry), more: rows.length >= want, cut: null } satisfies Found
        }
        const q = tsq(text.full)
        const unindexed = text.tree === "T"
        if (!unindexed && !hasPhrase(text.full)) {
          const rows = yield* exact(walk, filters, { cheap: sql`TRUE`, document: sql`s.document @@ ${q}` }, rank, sizes.orderedText, want)
          return { entries: rows.map(toEntry), more: rows.length >= want, cut: null } satisfies Found
        }
        const candidate: Match = { cheap: sql`TRUE`, document: unindexed ? null : sql`s.document @@ ${tsq(withoutPhrases(text.tree))}` }
        const walkAfter = (row: Row | null) =>
          row === null ? walk
          : query.sort === "relevance" ? walkOf("relevance", null, sql`s.listing_id < ${row.id}`)
          : walkOf(query.sort, positionOf(toEntry(row), query.sort), null)
        const step = yield* checked(walkAfter, filters, candidate, sql`s.document @@ ${q}`, rank, unindexed ? sizes.ordered : sizes.orderedText, want)
        return {
          entries: step.rows.map(toEntry),
          more: step.rows.length >= want || step.cut !== null,
          cut: step.cut === null ? null : toEntry(step.cut)
        } satisfies Found
      })

    /*
     * The planner does not count reading a TOASTed document: for a text query it would rather scan every
     * row and detoast every README than use the GIN index, and it spends parallel workers on a 21-row page
     * (`language` + `stars`: 8 ms without them, 160 ms with); and the lateral joins' estimates can set off JIT
     * compiling, which costs more (40 ms) than any of these statements runs. All three are turned off for the
     * statements of one search only, in a transaction of their own. A relevance search also turns off hash
     * joins: the planner joined a rare README word's GIN matches to the window by hashing, reading every match
     * twice (again in the fallback) instead of walking the window by id (p50 14 → 13 ms, p99 27.6 → 20–22 ms
     * over 100 000 listings).
     * The first statement also bounds the time of each (`statement_timeout`; waiting for a lock fails sooner, as
     * the database being unavailable rather than the search too broad) and asks what the words make.
     */
    const prepare = (query: CatalogQuery) => {
      const timeout = options.statementTimeoutMs
      const limits = timeout > 0
        ? sql`, set_config('statement_timeout', ${String(timeout)}, true), set_config('lock_timeout', ${String(Math.max(1, Math.floor(timeout / 2)))}, true)`
        : sql``
      const relevanceText = query.sort === "relevance" && query.text !== null
      if (query.text === null) {
        return Effect.as(
          sql`SELECT set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true) ${limits}`,
          null
        )
      }
      return Effect.map(
        sql<{ full: string | null; tree: string | null }>`
          SELECT set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true) ${limits},
            set_config('enable_seqscan', CASE WHEN t.tree IN ('T', '') THEN 'on' ELSE 'off' END, true),
            set_config('enable_hashjoin', ${relevanceText ? "off" : "on"}, true),
            t.full, t.tree
          FROM (SELECT q::text AS full, querytree(q)::text AS tree
            FROM (SELECT websearch_to_tsquery(${config}, ${query.text}) AS q) q) t`,
        (rows): Text | null => {
          const row = rows[0]
          return row === undefined || row.full === null ? null : { full: row.full, tree: row.tree ?? "" }
        }
      )
    }

    const run = (query: CatalogQuery): Effect.Effect<Found, SqlError> =>
      sql.withTransaction(Effect.gen(function*() {
        const text = yield* prepare(query)
        // Words that are all stop words (or no words at all) make an empty query, which matches nothing.
        if (query.text !== null && (text === null || text.full.trim() === "")) return { entries: [], more: false, cut: null } satisfies Found
        if (text !== null && text.tree !== "T" && query.sort === "relevance") return yield* relevance(query, text)
        // A query of only excluded words tells no relevance: by id, as without text, and no rank.
        return yield* ordered(query, text)
      }))

    const isTimeout = (error: SqlError) => (error.cause as { readonly code?: unknown } | null)?.code === "57014"

    const search = (query: CatalogQuery) =>
      run(query).pipe(
        Effect.catchAll((error) =>
          isTimeout(error)
            ? Effect.fail(
              new SearchUnavailable({
                reason: "search_too_broad",
                retryAfterSeconds: TOO_BROAD_RETRY_AFTER_SECONDS,
                detail: "This search needed more database time than a public search may take. Narrow it (rarer words, fewer alternatives, a filter) or try again shortly."
              })
            )
            : Effect.die(error)
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
      WHERE ${selling} GROUP BY s.category`.pipe(Effect.orDie)

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
          Effect.orDie
        )
    }
  })

/** `CATALOG_STATEMENT_TIMEOUT_MS` (default 250; 0: only `DATABASE_STATEMENT_TIMEOUT_MS`), see `CatalogSqlOptions`. */
export const catalogStatementTimeoutConfig: Config.Config<number> = Config.integer("CATALOG_STATEMENT_TIMEOUT_MS").pipe(
  Config.withDefault(DEFAULT_CATALOG_STATEMENT_TIMEOUT_MS),
  Config.validate({
    message: "CATALOG_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds from 0 (no bound of its own) to 600000",
    validation: (n) => n >= 0 && n <= 600_000
  })
)

/**
 * The ListingCatalog on PostgreSQL (or PGlite) through `@effect/sql`, its statements bounded by
 * `CATALOG_STATEMENT_TIMEOUT_MS` (an invalid value stops start-up).
 */
export const ListingCatalogSql = Layer.effect(
  ListingCatalog,
  Effect.flatMap(Effect.orDie(catalogStatementTimeoutConfig), (statementTimeoutMs) => makeListingCatalogSql(DEFAULT_RELEVANCE_WINDOWS, { statementTimeoutMs }))
)

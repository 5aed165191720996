import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { Match, Row, Rows } from "./Rows.js"
import type { CatalogSql } from "./Settings.js"
import type { Walk } from "./Walks.js"

/**
 * Below this many rows estimated to pass the filters (beyond a window), a step that reads documents reads one
 * for each of them; above it, it asks the text's indexes (see `beyond`). 1 000 documents are about 20 ms.
 */
const FILTER_FIRST = 1_000

/** The statements of one step of a search (`exact`), and the three forms it takes. */
export const makeSteps = ({ sql }: CatalogSql, { columns, rowChecks, rowOf }: Rows) => {
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

  return { exact } as const
}

/** One step of a search, as `makeSteps` makes it. */
export type Exact = ReturnType<typeof makeSteps>["exact"]

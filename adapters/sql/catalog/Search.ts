import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import { type CatalogEntry, type CatalogQuery, positionOf } from "../../../domain/Catalog.js"
import { makeChecked } from "./Checked.js"
import { makeRows, type Match, type Row, toEntry } from "./Rows.js"
import type { CatalogSql } from "./Settings.js"
import { makeSteps } from "./Steps.js"
import { hasNegation, hasPhrase, makePrepare, type Text, withoutPhrases } from "./TextQuery.js"
import { makeWalkOf } from "./Walks.js"

/** A search's entries, before the page is cut to its limit. */
export interface Found {
  readonly entries: ReadonlyArray<CatalogEntry>
  /** More follow: after the last entry, or after `cut` when the page ended early. */
  readonly more: boolean
  readonly cut: CatalogEntry | null
}

/**
 * `run(query)`: one search, its statements in a transaction of their own (see `makePrepare`): the relevance
 * classes of a text, or one step of any other order.
 */
export const makeRun = (catalog: CatalogSql) => {
  const { selling, sizes, sql } = catalog
  const rows = makeRows(catalog)
  const { columns } = rows
  const walkOf = makeWalkOf(catalog)
  const { exact } = makeSteps(catalog, rows)
  const checked = makeChecked(catalog, exact)
  const prepare = makePrepare(catalog)

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

  const tsq = (text: string) => sql`${text}::tsquery`

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

  const run = (query: CatalogQuery): Effect.Effect<Found, SqlError> =>
    sql.withTransaction(Effect.gen(function*() {
      const text = yield* prepare(query)
      // Words that are all stop words (or no words at all) make an empty query, which matches nothing.
      if (query.text !== null && (text === null || text.full.trim() === "")) return { entries: [], more: false, cut: null } satisfies Found
      if (text !== null && text.tree !== "T" && query.sort === "relevance") return yield* relevance(query, text)
      // A query of only excluded words tells no relevance: by id, as without text, and no rank.
      return yield* ordered(query, text)
    }))

  return run
}

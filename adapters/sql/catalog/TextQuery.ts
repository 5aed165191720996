import { Effect } from "effect"
import type { CatalogQuery } from "../../../domain/Catalog.js"
import type { CatalogSql } from "./Settings.js"

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
export const hasPhrase = (tsquery: string): boolean => {
  let found = false
  outsideLexemes(tsquery, (rest) => {
    const m = PHRASE_OPERATOR.exec(rest)
    if (m !== null) found = true
    return { take: 1, put: "" }
  })
  return found
}

/** Whether a tsquery excludes a word (`!`), so a match of the name alone does not make a match of the document. */
export const hasNegation = (tsquery: string): boolean => {
  let found = false
  outsideLexemes(tsquery, (rest) => {
    if (rest.startsWith("!")) found = true
    return { take: 1, put: "" }
  })
  return found
}

/** The tsquery with every phrase operator made `&`: true of every document the phrase is, and exact in its index. */
export const withoutPhrases = (tsquery: string): string =>
  outsideLexemes(tsquery, (rest) => {
    const m = PHRASE_OPERATOR.exec(rest)
    return m === null ? { take: 1, put: rest[0]! } : { take: m[0].length, put: "&" }
  })

/** The tsquery of the search, as PostgreSQL made it from the words: bound as text, never in the statement. */
export interface Text {
  /** `websearch_to_tsquery` of the words, as text. */
  readonly full: string
  /** Its part an index can answer (`querytree`): `T` when none can (only excluded words), empty for no words. */
  readonly tree: string
}

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
export const makePrepare = ({ config, options, sql }: CatalogSql) => (query: CatalogQuery) => {
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

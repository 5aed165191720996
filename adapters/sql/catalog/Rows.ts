import type { Fragment } from "@effect/sql/Statement"
import { Schema } from "effect"
import type { CatalogEntry } from "../../../domain/Catalog.js"
import type { Category } from "../../../domain/rules/Category.js"
import { ListingFromRow } from "../ListingRows.js"
import type { CatalogSql } from "./Settings.js"

interface SearchRow {
  readonly id: string
  readonly s_topics: ReadonlyArray<string>
  readonly s_stars: number
  readonly s_category: Category
  readonly s_rank: number | null
}

/** A row of a search: the listing's columns (`l.*`) and the catalog's, as `columns` names them. */
export type Row = Record<string, unknown> & SearchRow

const decodeListing = Schema.decodeUnknownSync(ListingFromRow)

/** The catalog entry of a search row. */
export const toEntry = (row: Row): CatalogEntry => ({
  listing: decodeListing(row),
  facts: { topics: row.s_topics, stars: row.s_stars, category: row.s_category },
  rank: row.s_rank
})

/**
 * A condition on a catalog row: `cheap` reads only the row (its inline `head`), `document` the TOASTed document.
 * `indexed`: `cheap` is a text condition the head's own indexes answer (the name, the head), matching few rows.
 */
export interface Match {
  readonly cheap: Fragment
  readonly document: Fragment | null
  readonly indexed?: boolean
}

/** The fragments every statement of a search reads its rows with. */
export const makeRows = ({ sql }: CatalogSql) => {
  /** The output columns of a search row (aliases `l`, `s`), with `rank` as its rank. */
  const columns = (rank: Fragment) => sql`l.*, s.topics AS s_topics, s.stars AS s_stars, s.category AS s_category, ${rank} AS s_rank`

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

  return { columns, rowOf, rowChecks } as const
}

/** The row fragments of a catalog. */
export type Rows = ReturnType<typeof makeRows>

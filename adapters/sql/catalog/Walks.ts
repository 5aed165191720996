import type { Fragment } from "@effect/sql/Statement"
import type { CatalogPosition, CatalogSort } from "../../../domain/Catalog.js"
import type { Row } from "./Rows.js"
import type { CatalogSql } from "./Settings.js"

/**
 * One order of the catalog as the SQL walks it. `window` names the first rows in this order after the
 * keyset position (ids in `w.id`, with the order's key beside them so the order carries through the joins);
 * `last` the last of them; `beyondOf` is true of the rows after a given one.
 */
export interface Walk {
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

/** How an order of selling listings by a column of `listings` (then id, the same way) is walked. */
interface SellingOrder {
  /** The column of `listings`. */
  readonly key: "created_at" | "price"
  /** Its type, to cast the bound key to. */
  readonly cast: "timestamptz" | "bigint"
  readonly direction: "ASC" | "DESC"
  /** The keyset position's key and id, or null on the first page. */
  readonly after: { readonly key: Date | string; readonly id: string } | null
  /** A row's key, bound as the position after it. */
  readonly keyOf: (row: Row) => Date | string
}

/** `walkOf(sort, after, rankBelow)`: the walk of an order from a keyset position (`rankBelow`: within a relevance class). */
export const makeWalkOf = ({ selling, sql }: CatalogSql) => {
  /** `newest` and `price`: the partial indexes of selling listings, by the key then id. */
  const sellingWalk = ({ after, cast, direction, key, keyOf }: SellingOrder): Walk => {
    const [k, d] = [sql.literal(key), sql.literal(direction)]
    const past = (value: Date | string, id: string) =>
      sql`(l.${k}, l.id) ${sql.literal(direction === "DESC" ? "<" : ">")} (${value}::${sql.literal(cast)}, ${id})`
    const position = after === null ? sql`TRUE` : past(after.key, after.id)
    const order = sql`l.${k} ${d}, l.id ${d}`
    const from = sql`FROM listings l WHERE ${selling} AND ${position} ORDER BY ${order}`
    return {
      window: (size) => sql`SELECT l.id, l.${k} ${from} LIMIT ${size}`,
      last: (size) => sql`SELECT l.id ${from} OFFSET ${size - 1} LIMIT 1`,
      beyondOf: (row) => past(keyOf(row), row.id),
      windowOrder: sql`w.${k} ${d}, w.id ${d}`,
      outputOrder: sql`${k} ${d}, id ${d}`,
      keyColumns: sql`l.id, l.${k}`,
      keptOrder: sql`${k} ${d}, id ${d}`,
      sorted: (t) => sql`SELECT l.id, l.${k} FROM ${t} t JOIN listings l ON l.id = t.id ORDER BY ${order}`,
      byId: false,
      position,
      order
    }
  }

  /*
   * The walks of each order. Relevance is by id within a class (and without text); `newest` and `price`
   * walk the partial indexes of selling listings, `stars` its index over every catalog row.
   */
  return (sort: CatalogSort, after: CatalogPosition | null, rankBelow: Fragment | null): Walk => {
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
      case "newest":
        return sellingWalk({
          key: "created_at",
          cast: "timestamptz",
          direction: "DESC",
          after: after?.sort === "newest" ? { key: after.createdAt, id: after.id } : null,
          keyOf: (row) => row.created_at as Date
        })
      case "price":
        return sellingWalk({
          key: "price",
          cast: "bigint",
          direction: "ASC",
          after: after?.sort === "price" ? { key: after.price.toString(), id: after.id } : null,
          keyOf: (row) => String(row.price)
        })
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
}

/** The walk of an order, as `makeWalkOf` makes it. */
export type WalkOf = ReturnType<typeof makeWalkOf>

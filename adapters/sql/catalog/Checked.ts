import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { Match, Row } from "./Rows.js"
import type { CatalogSql } from "./Settings.js"
import type { Exact } from "./Steps.js"
import type { Walk } from "./Walks.js"

/** What a `checked` step found. */
export interface Checked {
  readonly rows: ReadonlyArray<Row>
  /** The last candidate checked, when more candidates follow it: the page ends there. */
  readonly cut: Row | null
}

/*
 * A step whose condition only the document itself can decide (`check`: only excluded words, or a quoted
 * phrase): first up to `capped` + 1 candidates in order, found as `exact` finds rows, by `candidate` (true of
 * every row `check` is, and cheap: the filters, an index-exact form of the text), then `check` on the first
 * `capped` of them in order, one document read each, stopping at the `want`-th match. Returned: the matches,
 * and the `capped`-th candidate when all were checked and more follow, so the page can end there.
 */
export const makeChecked = ({ sizes, sql }: CatalogSql, exact: Exact) =>
  (
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

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Relevance by class (README, "Finding listings"): a listing ranks 2 when its repo name matches the whole
 * query, 1 when its name, description and topics do, 0 when only the README does. Each class is answered by
 * a GIN index over the small, inline `head` (never the TOASTed `document`): the name's words are the
 * weight-A lexemes of `head`, so `ts_filter(head, '{a}')` needs no column of its own and no backfill.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX listing_search_head_idx ON listing_search USING GIN (head)`
  yield* sql`CREATE INDEX listing_search_name_idx ON listing_search USING GIN (ts_filter(head, '{a}'))`
})

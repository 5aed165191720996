import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Re-download with x402 Sign-In-With-X: a wallet that proves itself gets the settled sale it made for a
 * listing. EVM addresses are stored checksummed but may be signed in any case, so the index is on
 * `lower(payer)`; only settled sales are ever looked up this way.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX IF NOT EXISTS sales_settled_payer_idx ON sales (listing_id, lower(payer)) WHERE status = 'settled'`
})

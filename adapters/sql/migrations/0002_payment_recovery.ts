import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What recovering a paid purchase without trusting the public payment needs:
 * - `sales.payment_id_digest`: SHA-256 of the x402 `payment-identifier` id the buyer sent (never on chain). One
 *   sale per (network, payer, id): the same id from the same payer is the same purchase.
 * - `sales.settle_by`: the last moment the payment can still settle; an unknown settle outcome is final after it.
 * - a partial index over pending sales, which the reconciler scans.
 * - `single_use`: digests of one-time values (OAuth states, sign-in challenges) already spent, until they expire.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE sales ADD COLUMN payment_id_digest text, ADD COLUMN settle_by timestamptz`
  yield* sql`CREATE UNIQUE INDEX sales_payment_id_key ON sales (network, payer, payment_id_digest)
             WHERE payment_id_digest IS NOT NULL`
  yield* sql`CREATE INDEX sales_pending_idx ON sales (created_at, id) WHERE status = 'pending'`

  yield* sql`CREATE TABLE single_use (
    purpose text COLLATE "C" NOT NULL,
    digest text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (purpose, digest)
  )`
  yield* sql`CREATE INDEX single_use_expiry_idx ON single_use (expires_at)`
})

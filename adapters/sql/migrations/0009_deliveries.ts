import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Updates after purchase (issue 30): each sale keeps the update window it was sold with (`updates_days`, 0 for
 * every sale made before), and each newer commit delivered within it is a `deliveries` row, one per sale and
 * commit, so the same update asked twice is recorded once.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sales ADD COLUMN updates_days integer NOT NULL DEFAULT 0 CHECK (updates_days BETWEEN 0 AND 3650)`
  yield* sql`CREATE TABLE deliveries (
    id text PRIMARY KEY,
    sale_id text NOT NULL REFERENCES sales (id),
    commit_sha text NOT NULL,
    delivered_at timestamptz NOT NULL,
    CONSTRAINT deliveries_sale_commit_key UNIQUE (sale_id, commit_sha)
  )`
})

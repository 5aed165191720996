import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The archive each receipt delivered (issue 39): its SHA-256 and size, recorded as its goods go out, so that the
 * receipt's provenance is read from here and never asks the code host. One row per receipt: the sale's own
 * (`receipt_id` = the sale's id) or an update delivery's (`receipt_id` = the delivery's id); the first stays.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE delivered_archives (
    receipt_id text PRIMARY KEY,
    sale_id text NOT NULL REFERENCES sales (id),
    delivery_id text REFERENCES deliveries (id),
    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size bigint NOT NULL CHECK (size >= 0),
    CONSTRAINT delivered_archives_receipt_check CHECK (receipt_id = COALESCE(delivery_id, sale_id))
  )`
})

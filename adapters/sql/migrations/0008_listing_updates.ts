import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `listings.updates_days`: the update window a listing offers, in days (0 = no updates after purchase, at most
 * 3650, as `UpdatesDays` in domain/Listing.ts). Existing listings get 0: they offered none when they were listed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE listings ADD COLUMN updates_days integer NOT NULL DEFAULT 0
    CONSTRAINT listings_updates_days_range CHECK (updates_days BETWEEN 0 AND 3650)`
})

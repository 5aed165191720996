import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `accounts.host_token`: the connected code-host login's own OAuth token (no scope), AES-256-GCM sealed and
 * bound to the account and login, asked at takeover time whether the login administers a repo.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN host_token text`
})

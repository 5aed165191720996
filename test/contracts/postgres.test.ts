import { Layer } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { runStorageContracts } from "../../testing/contracts/StorageContracts.js"
import { describePostgres } from "../support/postgres.js"

// One fresh database for the whole file, dropped at the end; skipped (or failed, with REQUIRE_POSTGRES=1)
// when TEST_DATABASE_URL cannot be reached.
await describePostgres("PostgreSQL", (database) => {
  runStorageContracts({ name: "postgres", rollsBack: true, concurrentClaims: true }, StorageSql.pipe(Layer.provide(database)))
})

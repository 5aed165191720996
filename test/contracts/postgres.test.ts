import { Layer } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { describePostgres } from "../support/postgres.js"
import { storageContracts } from "./StorageContracts.js"

// One fresh database for the whole file, dropped at the end; skipped (or failed, with REQUIRE_POSTGRES=1)
// when TEST_DATABASE_URL cannot be reached.
await describePostgres("PostgreSQL", (database) => {
  storageContracts("postgres", StorageSql.pipe(Layer.provide(database)))
})

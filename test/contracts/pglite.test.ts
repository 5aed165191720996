import { Layer } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { runStorageContracts } from "../../testing/contracts/StorageContracts.js"
import { pgliteTestDatabase } from "../support/pglite.js"

// One embedded database for the whole file (creating one takes seconds), in a temporary directory. PGlite runs
// every connection in one session: transactions roll back, but an outbox claim waits for another's.
runStorageContracts(
  { name: "pglite", rollsBack: true, concurrentClaims: false },
  StorageSql.pipe(Layer.provide(pgliteTestDatabase()))
)

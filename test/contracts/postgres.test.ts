import { Layer } from "effect"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { makeListingCatalogSql } from "../../adapters/sql/ListingCatalogSql.js"
import { ListingStoreSql } from "../../adapters/sql/ListingStoreSql.js"
import { MigrationsLive } from "../../adapters/sql/Migrations.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { runListingCatalogContract, runStorageContracts } from "../../testing/contracts/StorageContracts.js"
import { describePostgres } from "../support/postgres.js"

// One fresh database for the whole file, dropped at the end; skipped (or failed, with REQUIRE_POSTGRES=1)
// when TEST_DATABASE_URL cannot be reached.
await describePostgres("PostgreSQL", (database) => {
  runStorageContracts({ name: "postgres", rollsBack: true, concurrentClaims: true }, StorageSql.pipe(Layer.provide(database)))
  // Windows of one row: every class and order also goes through its index fallback below the window; checks
  // of two candidates a page: a query of only excluded words, or a phrase, pages on past its candidates.
  runListingCatalogContract(
    { name: "postgres, windows of 1", rollsBack: true, concurrentClaims: true },
    Layer.mergeAll(
      ListingStoreSql,
      Layer.effect(ListingCatalog, makeListingCatalogSql({ name: 1, head: 1, readme: 1, ordered: 1, orderedText: 1, capped: 2 }))
    ).pipe(
      Layer.provide(MigrationsLive),
      Layer.provide(database)
    )
  )
})

import { Layer } from "effect"
import { AccountStoreSql } from "./AccountStoreSql.js"
import { CredentialStoreSql } from "./CredentialStoreSql.js"
import { ListingCatalogSql } from "./ListingCatalogSql.js"
import { ListingStoreSql } from "./ListingStoreSql.js"
import { MigrationsLive } from "./Migrations.js"
import { OutboxSql } from "./OutboxSql.js"
import { SaleLedgerSql } from "./SaleLedgerSql.js"
import { SingleUseSql } from "./SingleUseSql.js"
import { TransactorSql } from "./TransactorSql.js"

/**
 * Every storage port on one SqlClient. `Layer.provide` builds MigrationsLive first, so the schema is current
 * before any port can be used.
 */
export const StorageSql = Layer.mergeAll(
  ListingStoreSql,
  ListingCatalogSql,
  AccountStoreSql,
  CredentialStoreSql,
  SaleLedgerSql,
  OutboxSql,
  TransactorSql,
  SingleUseSql
).pipe(Layer.provide(MigrationsLive))

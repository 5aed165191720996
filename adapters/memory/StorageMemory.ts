import { Layer } from "effect"
import { AccountStoreMemory } from "./AccountStoreMemory.js"
import { CredentialStoreMemory } from "./CredentialStoreMemory.js"
import { ListingCatalogMemory } from "./ListingCatalogMemory.js"
import { ListingsMemory, ListingStoreMemory } from "./ListingStoreMemory.js"
import { OutboxEventsMemory, OutboxMemory } from "./OutboxMemory.js"
import { SaleLedgerMemory } from "./SaleLedgerMemory.js"
import { SingleUseMemory } from "./SingleUseMemory.js"
import { TransactorMemory } from "./TransactorMemory.js"

/**
 * Every storage port in memory: tests and embedding. The ledger and the outbox share one event map, built
 * once here, so `SaleLedger.settle` queues into the same outbox the workers read; the listing store and the
 * catalog share the listings.
 */
export const StorageMemory = Layer.mergeAll(
  ListingStoreMemory,
  ListingCatalogMemory,
  AccountStoreMemory,
  CredentialStoreMemory,
  SaleLedgerMemory,
  OutboxMemory,
  TransactorMemory,
  SingleUseMemory
).pipe(Layer.provide([OutboxEventsMemory, ListingsMemory.Live]))

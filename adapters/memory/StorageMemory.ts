import { Layer } from "effect"
import { AccountStoreMemory } from "./AccountStoreMemory.js"
import { CredentialStoreMemory } from "./CredentialStoreMemory.js"
import { ListingStoreMemory } from "./ListingStoreMemory.js"
import { OutboxEventsMemory, OutboxMemory } from "./OutboxMemory.js"
import { SaleLedgerMemory } from "./SaleLedgerMemory.js"
import { SingleUseMemory } from "./SingleUseMemory.js"
import { TransactorMemory } from "./TransactorMemory.js"

/**
 * Every storage port in memory: tests and embedding. The ledger and the outbox share one event map, built
 * once here, so `SaleLedger.settle` queues into the same outbox the workers read.
 */
export const StorageMemory = Layer.mergeAll(
  ListingStoreMemory,
  AccountStoreMemory,
  CredentialStoreMemory,
  SaleLedgerMemory,
  OutboxMemory,
  TransactorMemory,
  SingleUseMemory
).pipe(Layer.provide(OutboxEventsMemory))

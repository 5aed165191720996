import { Layer } from "effect"
import { AccountStoreMemory } from "./AccountStoreMemory.js"
import { CredentialStoreMemory } from "./CredentialStoreMemory.js"
import { ListingStoreMemory } from "./ListingStoreMemory.js"
import { OutboxMemory } from "./OutboxMemory.js"
import { SaleLedgerMemory } from "./SaleLedgerMemory.js"
import { TransactorMemory } from "./TransactorMemory.js"

/** Every storage port in memory: tests and embedding. */
export const StorageMemory = Layer.mergeAll(
  ListingStoreMemory,
  AccountStoreMemory,
  CredentialStoreMemory,
  SaleLedgerMemory,
  OutboxMemory,
  TransactorMemory
)

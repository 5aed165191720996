import { Layer } from "effect"
import { AccountStoreMemory } from "../../adapters/memory/AccountStoreMemory.js"
import { CredentialStoreMemory } from "../../adapters/memory/CredentialStoreMemory.js"
import { ListingStoreMemory } from "../../adapters/memory/ListingStoreMemory.js"
import { OutboxMemory } from "../../adapters/memory/OutboxMemory.js"
import { SaleLedgerMemory } from "../../adapters/memory/SaleLedgerMemory.js"
import { TransactorMemory } from "../../adapters/memory/TransactorMemory.js"
import { storageContracts } from "./StorageContracts.js"

storageContracts(
  "memory",
  Layer.mergeAll(
    ListingStoreMemory,
    AccountStoreMemory,
    CredentialStoreMemory,
    SaleLedgerMemory,
    OutboxMemory,
    TransactorMemory
  )
)

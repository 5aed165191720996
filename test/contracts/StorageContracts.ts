import { layer } from "@effect/vitest"
import type { Layer } from "effect"
import type { AccountStore } from "../../ports/AccountStore.js"
import type { CredentialStore } from "../../ports/CredentialStore.js"
import type { ListingStore } from "../../ports/ListingStore.js"
import type { Outbox } from "../../ports/Outbox.js"
import type { SaleLedger } from "../../ports/SaleLedger.js"
import type { SingleUse } from "../../ports/SingleUse.js"
import type { Transactor } from "../../ports/Transactor.js"
import { AccountStoreContract } from "./AccountStore.contract.js"
import type { Backend } from "./Backend.js"
import { CredentialStoreContract } from "./CredentialStore.contract.js"
import { ListingStoreContract } from "./ListingStore.contract.js"
import { OutboxContract } from "./Outbox.contract.js"
import { SaleLedgerContract } from "./SaleLedger.contract.js"
import { SingleUseContract } from "./SingleUse.contract.js"
import { TransactorContract } from "./Transactor.contract.js"

export type Storage = ListingStore | AccountStore | CredentialStore | SaleLedger | Outbox | Transactor | SingleUse

/**
 * Registers every storage contract against one storage layer, built once for all of them (one database per
 * test file) with the live clock. Tests keep apart through fresh ids, emails and repos.
 */
export const storageContracts = (backend: Backend, storage: Layer.Layer<Storage, unknown>) =>
  layer(storage, { excludeTestServices: true, timeout: "90 seconds" })(`storage contracts [${backend}]`, (it) => {
    ListingStoreContract(it, backend)
    AccountStoreContract(it, backend)
    CredentialStoreContract(it, backend)
    SaleLedgerContract(it, backend)
    OutboxContract(it, backend)
    TransactorContract(it, backend)
    SingleUseContract(it, backend)
  })

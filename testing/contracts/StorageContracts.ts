import { layer } from "@effect/vitest"
import type { Layer } from "effect"
import type { AccountStore } from "../../ports/AccountStore.js"
import type { CredentialStore } from "../../ports/CredentialStore.js"
import type { ListingCatalog } from "../../ports/ListingCatalog.js"
import type { ListingStore } from "../../ports/ListingStore.js"
import type { Outbox } from "../../ports/Outbox.js"
import type { SaleLedger } from "../../ports/SaleLedger.js"
import type { SingleUse } from "../../ports/SingleUse.js"
import type { Transactor } from "../../ports/Transactor.js"
import type { Storage } from "../Storage.js"
import { AccountStoreContract } from "./AccountStore.contract.js"
import type { Backend, ContractIt } from "./Backend.js"
import { CredentialStoreContract } from "./CredentialStore.contract.js"
import { SaleLedgerDeliveriesContract } from "./Deliveries.contract.js"
import { SaleLedgerDeliveredArchivesContract } from "./DeliveredArchives.contract.js"
import { ListingCatalogContract } from "./ListingCatalog.contract.js"
import { ListingStoreContract } from "./ListingStore.contract.js"
import { OutboxContract } from "./Outbox.contract.js"
import { SaleLedgerContract } from "./SaleLedger.contract.js"
import { SingleUseContract } from "./SingleUse.contract.js"
import { TransactorContract } from "./Transactor.contract.js"

export type { Storage }

/** The memory adapters' traits: a Transactor that serialises but cannot roll back; claims proceed in parallel. */
export const memoryBackend: Backend = { name: "memory", rollsBack: false, concurrentClaims: true }

/**
 * Where a suite is registered: inside a vitest file, each call adds one `describe` block whose layer is built
 * once for all its tests (one database per block) with the live clock. Tests keep apart through fresh ids,
 * emails and repos, so a store shared with other blocks is fine.
 */
const block = <R, E>(title: string, storage: Layer.Layer<R, E>, body: (it: ContractIt<R>) => void): void => {
  layer(storage, { excludeTestServices: true, timeout: "90 seconds" })(title, body)
}

/**
 * Registers every storage contract (listings, the catalog search, accounts, credentials, sales, outbox, transactions, single-use
 * values) against one storage layer, in the calling vitest file. This is the suite this repository runs on
 * memory, PGlite and PostgreSQL; a storage adapter written elsewhere passes it to be a drop-in replacement.
 *
 * @param backend - the adapter's name and which optional guarantees it gives
 * @param storage - a layer providing every storage port (built once for the whole block)
 */
export const runStorageContracts = <E>(backend: Backend, storage: Layer.Layer<Storage, E>): void =>
  block(`storage contracts [${backend.name}]`, storage, (it) => {
    ListingStoreContract(it, backend)
    ListingCatalogContract(it, backend)
    AccountStoreContract(it, backend)
    CredentialStoreContract(it, backend)
    SaleLedgerContract(it, backend)
    SaleLedgerDeliveriesContract(it, backend)
    SaleLedgerDeliveredArchivesContract(it, backend)
    OutboxContract(it, backend)
    TransactorContract(it, backend)
    SingleUseContract(it, backend)
  })

/** Registers the ListingStore contract alone (it also needs the Transactor the store's writes join). */
export const runListingStoreContract = <E>(backend: Backend, storage: Layer.Layer<ListingStore | Transactor, E>): void =>
  block(`ListingStore contract [${backend.name}]`, storage, (it) => ListingStoreContract(it, backend))

/** Registers the ListingCatalog contract alone (it lists through the ListingStore it searches). */
export const runListingCatalogContract = <E>(backend: Backend, storage: Layer.Layer<ListingStore | ListingCatalog, E>): void =>
  block(`ListingCatalog contract [${backend.name}]`, storage, (it) => ListingCatalogContract(it, backend))

/** Registers the AccountStore contract alone (with the Transactor its writes join). */
export const runAccountStoreContract = <E>(backend: Backend, storage: Layer.Layer<AccountStore | Transactor, E>): void =>
  block(`AccountStore contract [${backend.name}]`, storage, (it) => AccountStoreContract(it, backend))

/** Registers the CredentialStore contract alone. */
export const runCredentialStoreContract = <E>(backend: Backend, storage: Layer.Layer<CredentialStore, E>): void =>
  block(`CredentialStore contract [${backend.name}]`, storage, (it) => CredentialStoreContract(it, backend))

/** Registers the SaleLedger contract alone (settling queues into the Outbox, so it needs both). */
export const runSaleLedgerContract = <E>(backend: Backend, storage: Layer.Layer<SaleLedger | Outbox, E>): void =>
  block(`SaleLedger contract [${backend.name}]`, storage, (it) => {
    SaleLedgerContract(it, backend)
    SaleLedgerDeliveriesContract(it, backend)
    SaleLedgerDeliveredArchivesContract(it, backend)
  })

/** Registers the Outbox contract alone (with the Transactor its claims run in). */
export const runOutboxContract = <E>(backend: Backend, storage: Layer.Layer<Outbox | Transactor, E>): void =>
  block(`Outbox contract [${backend.name}]`, storage, (it) => OutboxContract(it, backend))

/** Registers the Transactor contract alone (it writes through the stores to see what a transaction keeps). */
export const runTransactorContract = <E>(
  backend: Backend,
  storage: Layer.Layer<Transactor | ListingStore | AccountStore | SaleLedger, E>
): void => block(`Transactor contract [${backend.name}]`, storage, (it) => TransactorContract(it, backend))

/** Registers the SingleUse contract alone. */
export const runSingleUseContract = <E>(backend: Backend, storage: Layer.Layer<SingleUse, E>): void =>
  block(`SingleUse contract [${backend.name}]`, storage, (it) => SingleUseContract(it, backend))

import type { AccountStore } from "../ports/AccountStore.js"
import type { CredentialStore } from "../ports/CredentialStore.js"
import type { ListingCatalog } from "../ports/ListingCatalog.js"
import type { ListingStore } from "../ports/ListingStore.js"
import type { Outbox } from "../ports/Outbox.js"
import type { SaleLedger } from "../ports/SaleLedger.js"
import type { SingleUse } from "../ports/SingleUse.js"
import type { Transactor } from "../ports/Transactor.js"

/** Every storage port: what a complete storage adapter provides (as `StorageMemory` and `StorageSql` do). */
export type Storage = ListingStore | ListingCatalog | AccountStore | CredentialStore | SaleLedger | Outbox | Transactor | SingleUse

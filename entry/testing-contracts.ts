/**
 * The port contract suites as functions: {@link runStorageContracts} registers every storage port's suite
 * against one layer, and `run<Port>Contract` one port's. These are the suites this repository runs on memory,
 * PGlite and PostgreSQL; a storage adapter written elsewhere that passes them is a drop-in replacement.
 *
 * They register vitest tests, so call them at the top level of a vitest test file; they need `vitest` and
 * `@effect/vitest`, optional peer dependencies of this package (install them in your project).
 *
 * @packageDocumentation
 */
export type { Backend, ContractIt } from "../testing/contracts/Backend.js"
export {
  memoryBackend,
  runAccountStoreContract,
  runCredentialStoreContract,
  runListingCatalogContract,
  runListingStoreContract,
  runOutboxContract,
  runSaleLedgerContract,
  runSingleUseContract,
  runStorageContracts,
  runTransactorContract
} from "../testing/contracts/StorageContracts.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type * from "./PortTypes.js"
export type { Storage } from "../testing/Storage.js"

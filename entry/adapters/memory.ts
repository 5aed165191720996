/**
 * In-memory adapters of every storage port, the code host, the mailer and the rate limiter: tests, demos, embedding without a database. (The same as in `repomarket/testing`, which adds builders and the contract suites.)
 *
 * @packageDocumentation
 */
export { AccountStoreMemory } from "../../adapters/memory/AccountStoreMemory.js"
export { CodeHostIdentityMemory, type IdentityMemoryOptions } from "../../adapters/memory/CodeHostIdentityMemory.js"
export { CodeHostMemory, CodeHostMemoryControl, type FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
export { CredentialStoreMemory } from "../../adapters/memory/CredentialStoreMemory.js"
export { ListingCatalogMemory } from "../../adapters/memory/ListingCatalogMemory.js"
export { ListingsMemory, ListingStoreMemory } from "../../adapters/memory/ListingStoreMemory.js"
export { MailerMemory, SentMail } from "../../adapters/memory/MailerMemory.js"
export { OutboxEvents, OutboxEventsMemory, OutboxMemory } from "../../adapters/memory/OutboxMemory.js"
export { makeRateLimiterMemory, RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
export { SaleLedgerMemory } from "../../adapters/memory/SaleLedgerMemory.js"
export { SingleUseMemory } from "../../adapters/memory/SingleUseMemory.js"
export { StorageMemory } from "../../adapters/memory/StorageMemory.js"
export { TransactorMemory } from "../../adapters/memory/TransactorMemory.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type * from "../PortTypes.js"
export type { LimitExceeded } from "../../ports/RateLimiter.js"

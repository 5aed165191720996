/**
 * Everything to test against memory: the storage adapters, a seeded memory code host, a mailer that captures
 * sign-in links, the simulated facilitators, ready-made {@link memoryPorts} and builders of domain values.
 * Needs no test framework. The port contract suites, which do (vitest), are `repomarket/testing/contracts`.
 *
 * @packageDocumentation
 */
export { AccountStoreMemory } from "../adapters/memory/AccountStoreMemory.js"
export { CodeHostIdentityMemory, type IdentityMemoryOptions } from "../adapters/memory/CodeHostIdentityMemory.js"
export { CodeHostMemory, CodeHostMemoryControl, type FakeRepo } from "../adapters/memory/CodeHostMemory.js"
export { CredentialStoreMemory } from "../adapters/memory/CredentialStoreMemory.js"
export { ListingCatalogMemory } from "../adapters/memory/ListingCatalogMemory.js"
export { ListingsMemory, ListingStoreMemory } from "../adapters/memory/ListingStoreMemory.js"
export { MailerMemory, SentMail } from "../adapters/memory/MailerMemory.js"
export { OutboxEvents, OutboxEventsMemory, OutboxMemory } from "../adapters/memory/OutboxMemory.js"
export { makeRateLimiterMemory, RateLimiterMemory } from "../adapters/memory/RateLimiterMemory.js"
export { SaleLedgerMemory } from "../adapters/memory/SaleLedgerMemory.js"
export { SingleUseMemory } from "../adapters/memory/SingleUseMemory.js"
export { StorageMemory } from "../adapters/memory/StorageMemory.js"
export { TransactorMemory } from "../adapters/memory/TransactorMemory.js"
export { SecretBoxTest } from "../adapters/crypto/SecretBoxAesGcm.js"
export { makeFacilitatorSimulated, type SimulatedFacilitator } from "../adapters/x402/FacilitatorSimulated.js"
export { makeSimulatedLedger, SIMULATED_FAUCET_ATOMIC, type SimulatedLedger } from "../adapters/x402/SimulatedLedger.js"
export { MailerCapturing, memoryPorts, type MemoryPortsOptions } from "../testing/MemoryPorts.js"
export * from "../testing/Fixtures.js"
export type { Storage } from "../testing/Storage.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { Account } from "../domain/Account.js"
export type { Checkout } from "../domain/Checkout.js"
export type { ApiKey, MagicLinkToken, Session } from "../domain/Credentials.js"
export type { AccountId, TokenDigest } from "../domain/Ids.js"
export type { Listing } from "../domain/Listing.js"
export type { Sale } from "../domain/Sale.js"
export type { WebhookEvent } from "../domain/WebhookEvent.js"
export type * from "./PortTypes.js"
export type { Mail } from "../ports/Mailer.js"
export type { Fields } from "../testing/Fixtures.js"
export type { Chain } from "../domain/Wallet.js"
export type { LimitExceeded } from "../ports/RateLimiter.js"
export type { SimulatedTransfer, TransferRefusal } from "../adapters/x402/SimulatedLedger.js"
export type { Facilitator, FacilitatorError, PaymentRequirement, Settlement, SettlementStatus, SubmittedPayment, Verification } from "../ports/PaymentFacilitator.js"
export type { AtomicAmount } from "../domain/Money.js"

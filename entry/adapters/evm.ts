/**
 * Base (EVM): address rules and EIP-3009 `transferWithAuthorization` payments — parsing, the local signature and terms check, and the on-chain status of an authorization.
 *
 * @packageDocumentation
 */
export { baseFacts, normalizeBaseAddress } from "../../adapters/evm/BaseAddress.js"
export { checkEip3009, type Eip3009Terms, EvmReason } from "../../adapters/evm/Eip3009Check.js"
export { makeEip3009Status, type Eip3009StatusOptions } from "../../adapters/evm/Eip3009Status.js"
export { type Eip3009Authorization, type Eip3009Payment, parseEip3009Payment, verifyEip3009Signature } from "../../adapters/evm/EvmPayment.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { Eip3009Domain, Eip3009ParseProblem, RecoverPublicKey } from "../../adapters/evm/EvmPayment.js"
export type { Sale } from "../../domain/Sale.js"
export type { Address, ChainFacts } from "../../domain/Wallet.js"
export type { SettlementStatus } from "../../ports/PaymentFacilitator.js"
export type { Chain } from "../../domain/Wallet.js"

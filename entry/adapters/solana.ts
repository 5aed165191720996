/**
 * Solana: address rules and SPL `TransferChecked` payments — decoding, the local signature and layout check, and the on-chain status of a signature.
 *
 * @packageDocumentation
 */
export { makeSignatureStatus, type SignatureStatusOptions } from "../../adapters/solana/SignatureStatus.js"
export { normalizeSolanaAddress, solanaFacts } from "../../adapters/solana/SolanaAddress.js"
export { checkSolana, type SolanaTerms, SvmReason } from "../../adapters/solana/SolanaCheck.js"
export { type DecodedSolanaPayment, decodeSolanaPayment } from "../../adapters/solana/SolanaPayment.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { Sale } from "../../domain/Sale.js"
export type { Address, ChainFacts } from "../../domain/Wallet.js"
export type { SettlementStatus } from "../../ports/PaymentFacilitator.js"
export type { Chain } from "../../domain/Wallet.js"
export type { SolanaInstruction } from "../../adapters/solana/SolanaPayment.js"

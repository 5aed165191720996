/**
 * Solana: address rules and SPL `TransferChecked` payments — decoding, the local signature and layout check, and the on-chain status of a signature.
 *
 * @packageDocumentation
 */
export { makeSignatureStatus, type SignatureStatusOptions } from "../../adapters/solana/SignatureStatus.js"
export { normalizeSolanaAddress, solanaFacts } from "../../adapters/solana/SolanaAddress.js"
export { checkSolana, type SolanaTerms, SvmReason } from "../../adapters/solana/SolanaCheck.js"
export { type DecodedSolanaPayment, decodeSolanaPayment } from "../../adapters/solana/SolanaPayment.js"

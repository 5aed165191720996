/**
 * Base (EVM): address rules and EIP-3009 `transferWithAuthorization` payments — parsing, the local signature and terms check, and the on-chain status of an authorization.
 *
 * @packageDocumentation
 */
export { baseFacts, normalizeBaseAddress } from "../../adapters/evm/BaseAddress.js"
export { checkEip3009, type Eip3009Terms, EvmReason } from "../../adapters/evm/Eip3009Check.js"
export { makeEip3009Status, type Eip3009StatusOptions } from "../../adapters/evm/Eip3009Status.js"
export { type Eip3009Authorization, type Eip3009Payment, parseEip3009Payment, verifyEip3009Signature } from "../../adapters/evm/EvmPayment.js"

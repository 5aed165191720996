/**
 * x402 payments: the facilitator port over HTTP (live) and simulated (the test twin), the wire format of challenges and payment responses, and Sign-In-With-X wallet proofs.
 *
 * @packageDocumentation
 */
export { type FacilitatorHttp, facilitatorHttpFromConfig, type FacilitatorHttpTimeouts, makeFacilitatorHttp } from "../../adapters/x402/FacilitatorHttp.js"
export { makeFacilitatorSimulated, type SimulatedFacilitator, UNSUPPORTED_NETWORK } from "../../adapters/x402/FacilitatorSimulated.js"
export { caip2FromV1, SOLANA_MAINNET, v1FromCaip2 } from "../../adapters/x402/Networks.js"
export { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
export { decodePaymentHeader, MAX_PAYMENT_HEADER_LENGTH, type PaymentHeaders } from "../../codec/PaymentHeader.js"
export { makeSimulatedLedger, SIMULATED_FAUCET_ATOMIC, type SimulatedLedger, type SimulatedTransfer } from "../../adapters/x402/SimulatedLedger.js"
export { MAX_SIWX_HEADER_LENGTH, WalletProofSiwx } from "../../adapters/x402/WalletProofSiwx.js"
export {
  paymentRequiredV1Body,
  type PaymentRequiredV1,
  paymentRequiredV2,
  type PaymentRequiredV2,
  paymentResponseHeader,
  requirementV1,
  type RequirementV1,
  requirementV2,
  type RequirementV2
} from "../../codec/Wire.js"
export { BAZAAR_KEY, CHECKOUT_DISCOVERY, GOODS_MIME_TYPE, withOurDiscovery } from "../../codec/BazaarDiscovery.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { PaymentRequiredOptions } from "../../codec/Wire.js"
export type { PaymentRequirement, SubmittedPayment } from "../../domain/Payment.js"
export type { ChainFacts } from "../../domain/Wallet.js"
export type { PaymentFacilitator, Settlement } from "../../ports/PaymentFacilitator.js"
export type { WalletProof } from "../../ports/WalletProof.js"
export type { Chain } from "../../domain/Wallet.js"
export type { AtomicAmount } from "../../domain/Money.js"
export type { Facilitator, FacilitatorError, SettlementStatus, Verification } from "../../ports/PaymentFacilitator.js"
export type { TransferRefusal } from "../../adapters/x402/SimulatedLedger.js"
export type { Sale } from "../../domain/Sale.js"

/**
 * Why a payment can never settle, as the chain shows it: the `failureReason` of a failed sale and the `reason`
 * of its 402 `settlement_failed` problem (next to the facilitator's own x402 reasons).
 */

/** An EIP-3009 authorization's nonce was used by another transfer of the same payer (other `to` or `value`). */
export const AUTHORIZATION_USED_ELSEWHERE = "authorization_used_for_another_transfer"
/** The payer cancelled the EIP-3009 authorization (`cancelAuthorization`): the nonce is used, nothing moved. */
export const AUTHORIZATION_CANCELED = "authorization_canceled"
/** The payment's Solana transaction landed with an error: the same message can never land again. */
export const TRANSACTION_FAILED = "transaction_failed_on_chain"
/** A landed transaction carries the buyer's signature but does not pay the sale (never so for a checked payment). */
export const TRANSFER_MISMATCH = "transaction_does_not_pay_this_sale"

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

/**
 * x402's non-terminal settle reason (`@x402/core`'s `settlement_pending`): the facilitator broadcast the transfer
 * and answered before knowing its outcome. Never a refusal: the money may be on its way.
 */
export const SETTLEMENT_PENDING_REASON = "settlement_pending"

/** A settle answer that is not a success, as far as deciding whether it refused: its transaction and its reason. */
export interface SettleAnswer {
  readonly transaction: string | null
  readonly errorReason: string | null
}

/**
 * Whether a settle answer that is not a success (`success: false`) leaves the payment's fate open: it says `settlement_pending`, or it
 * names a transaction (the facilitator broadcast one, whatever it then said: the official facilitator answers
 * `invalid_transaction_state` with the broadcast transaction when it cannot remember it for a retry). Such a
 * sale stays pending and is resolved from the chain; only an answer that names no transaction and a terminal
 * reason is a refusal.
 */
export const settleInFlight = (answer: SettleAnswer): boolean =>
  answer.errorReason === SETTLEMENT_PENDING_REASON || (answer.transaction !== null && answer.transaction !== "")


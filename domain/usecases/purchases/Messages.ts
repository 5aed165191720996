import { AUTHORIZATION_CANCELED, AUTHORIZATION_USED_ELSEWHERE, TRANSACTION_FAILED, TRANSFER_MISMATCH } from "../../SettlementReasons.js"

/**
 * What a buyer is told, word for word, where a purchase does not end in goods. Kept apart from the decisions so the
 * rules read short; the decisions (which message, when) stay in the purchase files.
 */

/** What a payment already on the ledger is answered with, when it does not come with its buyer's id. */
export const ALREADY_USED = "This payment was already used. Every part of a settled payment is public on chain, so presenting it again never unlocks the goods by itself. Recover the purchase with the receipt link (Link rel=\"receipt\") of the first answer, by presenting the payment again with the x402 payment-identifier id it was sent with, or with x402 Sign-In-With-X using the paying wallet."

/** What a buyer is told of a settlement that failed, by its reason. */
export const settlementFailedDetail = (reason: string): string =>
  reason === AUTHORIZATION_USED_ELSEWHERE
    ? "The payment's authorization was used on chain by another transfer of the payer (same nonce, other recipient or amount), so this payment can never settle; nothing was delivered."
    : reason === AUTHORIZATION_CANCELED
    ? "The payer cancelled the payment's authorization on chain, so it can never settle; nothing was delivered."
    : reason === TRANSACTION_FAILED
    ? "The payment's transaction failed on chain, so it can never settle; nothing was delivered."
    : reason === TRANSFER_MISMATCH
    ? "The transaction that carries the payment's signature on chain does not pay this sale (another recipient, asset or amount), so this payment can never settle it; nothing was delivered."
    : `The payment could not be settled: ${refusalInWords(reason)}. Nothing was delivered.`

/**
 * A settle the facilitator refused while the chain shows no transfer of it: nothing moved so far, but the buyer's
 * authorization stays valid until `settleBy`, so the sale stays pending until then and is honoured should it
 * still move (anyone holding the signed authorization can submit it).
 */
export const settleRefusedDetail = (reason: string, settleBy: Date | null): string =>
  `The facilitator refused to settle this payment: ${refusalInWords(reason)}. The chain shows no transfer of it, and nothing was delivered.` +
  (settleBy === null
    ? ""
    : ` The signed authorization stays valid until ${settleBy.toISOString()}: should it still be settled on chain by then, retrying with the same payment and its payment-identifier id gets the goods; after that it can never move.`)

/** The same refused payment presented again while its authorization may still move: it is never settled a second time. */
export const refusedEarlierDetail = (reason: string, settleBy: Date | null): string =>
  `This payment was refused when it was settled: ${refusalInWords(reason)}. It is not sent for settlement again; sign a new payment to buy.` +
  (settleBy === null
    ? ""
    : ` Should this one still be settled on chain before ${settleBy.toISOString()}, retrying it with its payment-identifier id gets the goods.`)

/** A payment the facilitator did not verify, with its reason in words. */
export const notVerifiedDetail = (reason: string): string =>
  `The payment did not verify: ${refusalInWords(reason)}. Nothing was charged.`

/** A settle sent but not answered: the sale stays pending (503 with Retry-After). */
export const SETTLEMENT_PENDING = "The payment was sent for settlement but its outcome is not known yet, so it may have been charged. It is recorded and will not be charged twice: retry shortly with the same payment (and its payment-identifier) to receive the goods once it settles."

/** A payment-identifier id presented with a payment that is not that purchase's. */
export const PAYMENT_ID_CONFLICT = "This payment-identifier id names another purchase of this payer, and this payment is not that purchase's (other terms, another checkout, or not validly signed by the payer). To retry that purchase send the same payment (or a new one signed by the same payer for the same terms at the same checkout) with the id; for a new purchase use a new id."

/** Live payments asked for where no facilitator is configured. */
export const LIVE_PAYMENTS_OFF = "Live payments are off: the operator has not configured an x402 facilitator. The test checkout still works."

/** The facilitator did not answer a step that moves no money. */
export const facilitatorUnavailable = (what: string): string =>
  `The payment facilitator could not ${what}; nothing was charged by this request. Try again shortly.`

/** A v2 payment made against an offer for another commit than the checkout sells now (a push came between). */
export const commitMovedDetail = (repository: string, commit: string): string =>
  `The offer this payment was made against names another commit than ${repository} sells now (${commit}): the seller pushed since, or the offer was altered. Nothing was charged. This 402's signed offers name the current commit; pay one of them to receive it.`

/** A payment whose echoed offer names another update window than the listing has now. */
export const updatesChangedDetail = (offered: number, now: number): string =>
  `The offer this payment was made against includes ${offered} days of updates after purchase, but the listing now offers ${now}: the seller changed it since, or the offer was altered. Nothing was charged. Pay one of this 402's offers to buy on the current terms.`

/** A v2 payment echoing the offer-receipt extension without a readable offer for its network. */
export const OFFER_MISMATCH = "The payment echoes this checkout's signed offers, but none for its network names a commit. Nothing was charged. Pay one of this 402's offers as it was given."

/**
 * Why a facilitator refused a payment (its x402 `invalidReason` or `errorReason`), in words a buyer can act on.
 * The official facilitators' reasons are long codes (`invalid_exact_evm_transaction_simulation_failed`); they are
 * read by what they name, so a new scheme's spelling of the same cause reads the same.
 */
export const refusalInWords = (reason: string): string => {
  const r = reason.toLowerCase()
  if (r.includes("insufficient")) return "the paying wallet does not hold enough USDC for this price"
  if (r.includes("simulation_failed") || r.includes("transaction_failed")) {
    return "the USDC contract refused this transfer (the token may be paused, or the payer's or the seller's address blocked by its issuer)"
  }
  if (r.includes("valid_before") || r.includes("expired")) return "the payment's authorization has expired; sign a new payment"
  if (r.includes("valid_after")) return "the payment's authorization is not valid yet; check the wallet's clock and sign a new payment"
  if (r.includes("nonce") && r.includes("used")) return "the payment's authorization was already used on chain"
  if (r.includes("signature")) return "the payment's signature does not check out"
  if (r.includes("network_mismatch")) return "the payment is for another network than this checkout's"
  if (r.includes("mismatch")) return "the payment does not match this checkout's terms (recipient, asset or amount)"
  if (r.includes("fee_payer")) return "the Solana transaction's fee payer is not the facilitator's"
  return `the facilitator refused it (${reason})`
}

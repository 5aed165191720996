import { Effect, Either } from "effect"
import { InvalidInput } from "../../domain/Errors.js"
import { formatUsd } from "../../domain/Money.js"
import type { Settlement, SubmittedPayment } from "../../ports/PaymentFacilitator.js"
import type { Purchases, Quote } from "../../domain/usecases/Purchases.js"
import type { Redownloads, SiwxChallenge } from "../../domain/usecases/Redownloads.js"
import type { AtTheEdge } from "../Unavailable.js"
import { BAZAAR_KEY, BUY_TOOL_DISCOVERY, serviceMetadata } from "../../codec/BazaarDiscovery.js"
import { siwxExtensions } from "../../codec/SiwxWire.js"
import { CHECKOUT_EXTENSIONS, decodePaymentHeader, encodeHeader, paymentRequiredV2 } from "../../codec/Wire.js"
import { checkoutProblem, makeOfferOf, offerTerms, type Unpayable, withSiwx } from "../handlers/Offer402.js"
import { PAYMENT_META } from "./McpToolList.js"
import { paymentRequiredResult, problemResult, settlementObject } from "./McpResults.js"

/**
 * The x402 MCP transport's payment half (coinbase/x402 specs/transports-v2/mcp.md): the payment an agent puts
 * in `_meta["x402/payment"]`, and the payment-required answer with the checkout's current terms.
 */

/**
 * The payment in `_meta["x402/payment"]`, read exactly as the HTTP checkout reads `PAYMENT-SIGNATURE` (x402
 * v2) or `X-PAYMENT` (v1, by its `x402Version`): the object is put through the same decoder, with the same
 * size bound, field checks and payment-identifier rule. Null when there is none; a malformed one is a 400
 * `invalid_request` naming the `_meta` field, as a malformed header is one naming the header.
 */
export const paymentOf = (meta: Readonly<Record<string, unknown>> | undefined): Either.Either<SubmittedPayment | null, InvalidInput> => {
  const raw = meta?.[PAYMENT_META]
  if (raw === undefined || raw === null) return Either.right(null)
  const field = `_meta.${PAYMENT_META}`
  if (typeof raw !== "object" || Array.isArray(raw)) return Either.left(InvalidInput.forField(field, "must be an x402 PaymentPayload object"))
  const v1 = (raw as { readonly x402Version?: unknown }).x402Version === 1
  return decodePaymentHeader(v1 ? { "x-payment": encodeHeader(raw) } : { "payment-signature": encodeHeader(raw) }).pipe(
    Either.mapLeft((reason) => InvalidInput.forField(field, reason.replace(/^(PAYMENT-SIGNATURE|X-PAYMENT)/, "the payment")))
  )
}

/** Why the offer is made again: a refused payment's reason and detail, and a failed settlement. */
export interface OfferContext {
  readonly reason: string
  readonly detail: string
  readonly settlement?: Settlement & { readonly payer: string }
}

const NO_PAYMENT = "payment_required"

/**
 * The payment-required answer of a checkout (the offer of `Offer402`, as MCP renders it): its current `accepts`
 * (the HTTP 402's, live or test twin), the `payment-identifier` declaration, the signed offers (`offer-receipt`),
 * the Bazaar's `buy_repo` entry, the service metadata on the resource and a Sign-In-With-X challenge, with the
 * refusal's reason as `error` when a payment was refused. A checkout that cannot be paid (voided, not selling,
 * live payments off) still lets a wallet that paid for it re-download, as its HTTP answer does: its problem
 * carries a Sign-In-With-X challenge for `redownload`; an unknown one fails with its problem (410, 409, 503).
 */
export const makeOffer = (purchases: AtTheEdge<Purchases>, redownloads: AtTheEdge<Redownloads>) => {
  const offerOf = makeOfferOf(purchases, redownloads)
  const render = (livemode: boolean, refused: OfferContext | undefined) => (quote: Quote, siwx: SiwxChallenge) =>
    Effect.sync(() => {
      const http402 = paymentRequiredV2(quote.requirements, {
        ...offerTerms(quote),
        error: refused?.reason ?? NO_PAYMENT,
        // The 402's declarations, with the Bazaar's MCP-tool entry for buy_repo in place of the checkout's, and
        // its signed offers (one per accepts entry) naming the commit and, once cut, the archive's digest.
        extensions: { ...CHECKOUT_EXTENSIONS, [BAZAAR_KEY]: BUY_TOOL_DISCOVERY }
      })
      const service = serviceMetadata(new URL(quote.resource).origin, quote.listing.language)
      const required = withSiwx({ ...http402, resource: { ...http402.resource, ...service } }, siwx)
      const price = quote.checkout.price === null ? "" : ` for ${formatUsd(quote.checkout.price)} USDC`
      const explanation = refused === undefined
        ? `Payment required: ${quote.listing.repo.slug}${price}${livemode ? "" : " (test twin, simulated money)"}. Sign one of the accepts with an x402 wallet and call buy_repo again with the same arguments and the payment in _meta["x402/payment"].`
        : `The payment was refused (${refused.reason}): ${refused.detail} Nothing was delivered; pay one of the current accepts to buy.`
      return paymentRequiredResult(required, explanation, refused?.settlement === undefined ? undefined : settlementObject(refused.settlement))
    })
  const unpayable = (e: Unpayable, siwx: SiwxChallenge) => problemResult(checkoutProblem(e), { extensions: siwxExtensions(siwx) })

  return (id: string, livemode: boolean, refused?: OfferContext) => offerOf(id, livemode, render(livemode, refused), unpayable)
}

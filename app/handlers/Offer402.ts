import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import type * as E from "../../domain/Errors.js"
import { GoodsUnavailable } from "../../domain/Errors.js"
import type { CodeHostError } from "../../ports/CodeHost.js"
import type { Settlement } from "../../ports/PaymentFacilitator.js"
import type { Goods, Purchases, Quote } from "../../domain/usecases/Purchases.js"
import type { Redownloads, SiwxChallenge } from "../../domain/usecases/Redownloads.js"
import type { AtTheEdge } from "../Unavailable.js"
import { clientAddress } from "./ClientAddress.js"
import { offersExtension } from "../../codec/OfferReceipt.js"
import { siwxExtensions } from "../../codec/SiwxWire.js"
import { CHECKOUT_EXTENSIONS, encodeHeader, GOODS_MIME_TYPE, paymentRequiredV1Body, paymentRequiredV2 } from "../../codec/Wire.js"
import { problemResponse } from "../Guard.js"
import { checkoutPageHtml, checkoutProblemPage } from "../pages/CheckoutPage.js"
import { prefersHtml } from "../pages/Negotiation.js"
import * as P from "../Problem.js"

/**
 * The checkout's 402 offer and the one table of its problems, for every door that sells: the HTTP checkout
 * (`CheckoutHandlers`), its Sign-In-With-X re-download (`Redownload`) and the MCP tools (`McpPayment`,
 * `McpResults`). What a failure answers is decided here once, so the doors cannot drift apart.
 */

// ---------------------------------------------------------------------------------------------------------
// The problems

/**
 * Every failure a checkout, a payment or a re-download can end in, besides the refusals answered with a fresh
 * offer (`PaymentRejected`, `SettlementFailed`, `WalletProofRefused`), and the RFC 9457 problem it answers:
 * status, code, title, detail and fields (`page`, `retry_after_seconds`, `receipt`). The checkout endpoints in
 * `Api.ts` declare the same schemas, so the framework's encoding of a handler's failure is this table's; the
 * guard mirrors `retry_after_seconds` in `Retry-After`, and `goodsUnavailable` below adds what a paid answer
 * carries (the receipt link, `PAYMENT-RESPONSE`).
 */
const CHECKOUT_PROBLEMS = {
  InvalidInput: P.InvalidInput,
  NotFound: P.NotFound,
  CheckoutGone: P.CheckoutGone,
  NotSelling: P.NotSelling,
  PaymentIdConflict: P.PaymentIdConflict,
  RateLimited: P.RateLimited,
  PaymentsUnavailable: P.PaymentsUnavailable,
  SettlementPending: P.SettlementPending,
  HostUnavailable: P.HostUnavailable,
  GoodsUnavailable: P.GoodsUnavailable,
  ReceiptExpired: P.ReceiptExpired,
  UpdateRefused: P.UpdateRefused
} as const

/** A failure of the table: what a checkout, a payment or a re-download answers as a problem. */
export type CheckoutFailure = Schema.Schema.Type<(typeof CHECKOUT_PROBLEMS)[keyof typeof CHECKOUT_PROBLEMS]>

/** Whether a failure is one of the table's. */
export const isCheckoutFailure = (e: { readonly _tag: string }): e is CheckoutFailure => Object.hasOwn(CHECKOUT_PROBLEMS, e._tag)

/** A checkout failure as its problem (the same object the HTTP API answers, the MCP tools carry and the page shows). */
export const checkoutProblem = (e: CheckoutFailure): P.ProblemJson =>
  Schema.encodeSync(CHECKOUT_PROBLEMS[e._tag] as unknown as Schema.Schema<CheckoutFailure, P.ProblemJson>)(e)

/** A checkout that cannot be paid right now: voided (410), not selling (409), live payments off (503). */
export type Unpayable = E.CheckoutGone | E.NotSelling | E.PaymentsUnavailable

/** How long a buyer told `goods_unavailable` is asked to wait when the code host named no time. */
export const GOODS_RETRY_AFTER_SECONDS = 30

/**
 * A settled sale whose archive the code host could not give: 503 `goods_unavailable`, never a 200 with a cut
 * body or a closed socket. The sale stays settled; the answer carries what a 200 would (the receipt link in
 * the body and in `Link`, and for a purchase the settlement receipt), so the buyer knows the goods are owed.
 */
export const goodsUnavailable = (goods: Goods, e: CodeHostError, receiptHeader: { readonly name: string; readonly value: string } | null) => {
  const retryAfterSeconds = e.retryAfterSeconds ?? GOODS_RETRY_AFTER_SECONDS
  const problem = checkoutProblem(
    new GoodsUnavailable({
      receipt: goods.receipt,
      retryAfterSeconds,
      detail: `This purchase is paid and recorded, but the code host could not deliver its archive just now (${e.reason === "rate_limited" ? "its rate limit was reached" : e.reason === "unavailable" ? "it did not answer" : "it refused the download"}). Nothing is lost: the receipt link (Link rel="receipt", and "receipt" here) downloads the same commit for 7 days after payment; try it after Retry-After.`
    })
  )
  return problemResponse(problem, {
    link: `<${goods.receipt}>; rel="receipt"`,
    "cache-control": "no-store",
    "retry-after": String(retryAfterSeconds),
    ...(receiptHeader === null ? {} : { [receiptHeader.name.toLowerCase()]: receiptHeader.value })
  })
}

/** A failed settlement as x402's settlement response carries it (HTTP's `PAYMENT-RESPONSE`, MCP's `_meta`). */
export const failedSettlement = (e: E.SettlementFailed): Settlement & { readonly payer: string } => ({
  success: false,
  transaction: null,
  network: e.network,
  payer: e.payer,
  errorReason: e.reason
})

// ---------------------------------------------------------------------------------------------------------
// The offer

/** What the checkout sells, in the words of every offer (HTTP 402, the checkout page, MCP's payment-required). */
export const offerDescription = (quote: Quote): string =>
  `${quote.listing.repo.slug}: the repository's default branch as a .tar.gz${quote.livemode ? "" : " (test: simulated money, no real bytes)"}`

/** What every offer of a quote says: the resource, its description and the signed offers (`offer-receipt`). */
export const offerTerms = (quote: Quote) => ({
  resource: quote.resource,
  description: offerDescription(quote),
  v1Extensions: offersExtension(quote.offers)
})

/** A v2 `PAYMENT-REQUIRED` object that also asks a returning wallet to sign in. */
export const withSiwx = <A extends object>(required: A, siwx: SiwxChallenge): A & { readonly extensions: Record<string, unknown> } => {
  const previous = (required as { readonly extensions?: Record<string, unknown> }).extensions ?? {}
  return { ...required, extensions: { ...previous, ...siwxExtensions(siwx) } }
}

/**
 * The offer of a checkout, whatever the door: its quote and a fresh Sign-In-With-X challenge, as the door
 * renders them. A checkout that cannot be paid still lets a wallet that paid earlier re-download: for any
 * checkout this server knows (current or not) the door renders the problem with a challenge; for an unknown
 * one the problem is the failure.
 */
export const makeOfferOf = (purchases: AtTheEdge<Purchases>, redownloads: AtTheEdge<Redownloads>) =>
<A, R>(
  id: string,
  livemode: boolean,
  render: (quote: Quote, siwx: SiwxChallenge) => Effect.Effect<A, never, R>,
  unpayable: (e: Unpayable, siwx: SiwxChallenge) => A
) => {
  const orUnpayable = (e: Unpayable) =>
    Effect.flatMap(redownloads.challengeFor(id, livemode), Option.match({
      onNone: () => Effect.fail(e),
      onSome: (siwx) => Effect.succeed(unpayable(e, siwx))
    }))
  // The client's address bounds how many archive cuts its 402s may start (see ArchiveCuts).
  return Effect.flatMap(clientAddress, (client) => purchases.quote(id, livemode, client)).pipe(
    Effect.flatMap((quote) => Effect.flatMap(redownloads.challenge(quote.checkout, livemode), (siwx) => render(quote, siwx))),
    Effect.catchTags({ CheckoutGone: orUnpayable, NotSelling: orUnpayable, PaymentsUnavailable: orUnpayable })
  )
}

/**
 * The HTTP 402: v2 requirements (with the payment-identifier declaration, the signed offers naming the pinned
 * commit and a Sign-In-With-X challenge) in `PAYMENT-REQUIRED`, the v1 object (with the signed offers) as the
 * JSON body. A browser (HTML preferred, as the pages negotiate) gets the checkout page as the body instead:
 * same status, same headers, so x402 clients see no difference.
 */
export const renderOffer = (baseUrl: string) => (
  quote: Quote,
  siwx: SiwxChallenge,
  error?: string,
  extraHeaders: Record<string, string> = {},
  detail?: string
) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const about = { ...offerTerms(quote), error, detail, extensions: CHECKOUT_EXTENSIONS }
    const headers = {
      "payment-required": encodeHeader(withSiwx(paymentRequiredV2(quote.requirements, about), siwx)),
      "cache-control": "no-store",
      link: `<${quote.page}>; rel="describedby"`,
      ...extraHeaders
    }
    if (prefersHtml(request.headers["accept"])) return checkoutPageHtml(quote, { error, detail, headers, baseUrl })
    return HttpServerResponse.unsafeJson(paymentRequiredV1Body(quote.requirements, about), { status: 402, headers })
  })

/**
 * An HTTP checkout that cannot be paid right now still lets a wallet that paid earlier re-download: its
 * problem answer carries a `PAYMENT-REQUIRED` header with no requirements (`accepts: []`, x402's shape for
 * sign-in only) and the Sign-In-With-X challenge to sign.
 */
const unpayableResponse = (e: Unpayable, siwx: SiwxChallenge, error?: string) => {
  const problem = checkoutProblem(e)
  const required = withSiwx({
    x402Version: 2,
    error: error ?? problem.code,
    resource: { url: siwx.uri, description: problem.detail, mimeType: GOODS_MIME_TYPE },
    accepts: []
  }, siwx)
  return problemResponse(
    error === undefined ? problem : { ...problem, reason: error },
    { "payment-required": encodeHeader(required), "cache-control": "no-store" }
  )
}

/**
 * The HTTP checkout's offer: the 402 with fresh requirements and a fresh challenge (naming why, when a payment
 * or a proof was refused), or the problem of a checkout that cannot be paid.
 */
export const makeOffer402 = (purchases: AtTheEdge<Purchases>, redownloads: AtTheEdge<Redownloads>, baseUrl: string) => {
  const offerOf = makeOfferOf(purchases, redownloads)
  const render = renderOffer(baseUrl)
  return (id: string, livemode: boolean, error?: string, extraHeaders?: Record<string, string>, detail?: string) =>
    offerOf(id, livemode, (quote, siwx) => render(quote, siwx, error, extraHeaders, detail), (e, siwx) => unpayableResponse(e, siwx, error))
}

/** The HTTP checkout's offer for a checkout and, when a payment or a proof was refused, why. */
export type Offer402 = ReturnType<typeof makeOffer402>

const decoder = new TextDecoder()

/**
 * A browser asking a checkout that cannot be paid gets the problem as a page (same status, same x402 headers);
 * x402 clients keep the problem+json. Anything unexpected is left to the guard, as for every route.
 */
export const forBrowser = <E extends { readonly _tag: string }, R>(answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  answer.pipe(
    Effect.map((res) => {
      if (res.status === 402 || res.body._tag !== "Uint8Array") return res
      const problem = JSON.parse(decoder.decode(res.body.body)) as P.ProblemJson
      const kept = Object.fromEntries(Object.entries(res.headers).filter(([k]) => k === "payment-required" || k === "cache-control"))
      return checkoutProblemPage(problem, kept)
    }),
    Effect.catchIf(
      (e): e is E => isCheckoutFailure(e),
      (e) => Effect.succeed(checkoutProblemPage(checkoutProblem(e as E & CheckoutFailure)))
    )
  )

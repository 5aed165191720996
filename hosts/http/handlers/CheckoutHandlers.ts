import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Stream } from "effect"
import { InvalidInput, type PaymentRejected, type SettlementFailed } from "../../../domain/Errors.js"
import { type Goods, Purchases, type Quote } from "../../../domain/usecases/Purchases.js"
import { Redownloads, type SiwxChallenge } from "../../../domain/usecases/Redownloads.js"
import {
  CHECKOUT_EXTENSIONS,
  decodePaymentHeader,
  encodeHeader,
  GOODS_MIME_TYPE,
  paymentRequiredV1Body,
  paymentRequiredV2,
  paymentResponseHeader
} from "../../../adapters/x402/Wire.js"
import { Api } from "../Api.js"
import { clientAddress } from "./ClientAddress.js"
import { redownloadAnswers, SIWX_REQUEST_HEADER, withSiwx } from "./Redownload.js"

/**
 * The 402: v2 requirements (with the payment-identifier declaration and a Sign-In-With-X challenge) in
 * `PAYMENT-REQUIRED`, the v1 object as the JSON body.
 */
const challenge = (
  quote: Quote,
  siwx: SiwxChallenge,
  error?: string,
  extraHeaders: Record<string, string> = {},
  detail?: string
) => {
  const about = {
    resource: quote.resource,
    description: `${quote.listing.repo.slug}: the default branch as a .tar.gz${quote.livemode ? "" : " (test: simulated money, no real bytes)"}`,
    error,
    detail,
    extensions: CHECKOUT_EXTENSIONS
  }
  return HttpServerResponse.unsafeJson(paymentRequiredV1Body(quote.requirements, about), {
    status: 402,
    headers: {
      "payment-required": encodeHeader(withSiwx(paymentRequiredV2(quote.requirements, about), siwx)),
      "cache-control": "no-store",
      link: `<${quote.page}>; rel="describedby"`,
      ...extraHeaders
    }
  })
}

/**
 * The platform ends a streamed response cleanly even when its stream fails after the headers went out, which
 * would hand the buyer a truncated archive under a 200. So a failing archive cuts the connection instead:
 * the client sees an error, and the payment presented again or the receipt link delivers it whole.
 */
const abortOnFailure = (body: Goods["body"], request: HttpServerRequest.HttpServerRequest) =>
  body.pipe(Stream.tapErrorCause(() =>
    Effect.sync(() => {
      try {
        NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
      } catch {
        // Not a Node request (the Lambda host buffers the body and turns a failure into an error answer).
      }
    })))

const delivery = (goods: Goods, version: 1 | 2 | null, request: HttpServerRequest.HttpServerRequest) => {
  const receipt = version === null ? null : paymentResponseHeader(goods.settlement, version)
  return HttpServerResponse.stream(abortOnFailure(goods.body, request), {
    contentType: GOODS_MIME_TYPE,
    headers: {
      "content-disposition": `attachment; filename="${goods.filename}"`,
      link: `<${goods.receipt}>; rel="receipt"`,
      "cache-control": "private, no-store",
      ...(receipt === null ? {} : { [receipt.name.toLowerCase()]: receipt.value })
    }
  })
}

export const CheckoutHandlers = HttpApiBuilder.group(Api, "checkout", (handlers) =>
  Effect.gen(function*() {
    const purchases = yield* Purchases
    const { offer, redownload } = redownloadAnswers(purchases, yield* Redownloads, challenge, (goods, request) => delivery(goods, null, request))

    const checkout = (id: string, livemode: boolean) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { headers } = request
        if (headers["payment-signature"] === undefined && headers["x-payment"] === undefined) {
          const proof = headers[SIWX_REQUEST_HEADER]
          return yield* (proof === undefined ? offer(id, livemode) : redownload(id, livemode, proof))
        }
        const payment = decodePaymentHeader({ "payment-signature": headers["payment-signature"], "x-payment": headers["x-payment"] })
        if (Either.isLeft(payment)) {
          const field = headers["payment-signature"] !== undefined ? "PAYMENT-SIGNATURE" : "X-PAYMENT"
          return yield* InvalidInput.forField(field, payment.left)
        }
        const version = payment.right.x402Version
        return yield* purchases.pay(id, livemode, payment.right, yield* clientAddress).pipe(
          Effect.map((goods) => delivery(goods, version, request)),
          // A refused or failed payment is answered the x402 way: 402 with fresh requirements to pay again.
          Effect.catchTags({
            PaymentRejected: (e: PaymentRejected) => offer(id, livemode, e.reason, {}, e.detail),
            SettlementFailed: (e: SettlementFailed) => {
              const failed = paymentResponseHeader(
                { success: false, transaction: null, network: e.network, payer: e.payer, errorReason: e.reason },
                version
              )
              return offer(id, livemode, e.reason, { [failed.name.toLowerCase()]: failed.value }, e.detail)
            }
          })
        )
      })

    return handlers
      .handle("checkout", ({ path }) => checkout(path.id, true))
      .handle("testCheckout", ({ path }) => checkout(path.id, false))
      .handle("download", ({ path }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.map(purchases.download(path.token), (goods) => delivery(goods, null, request))))
  }))

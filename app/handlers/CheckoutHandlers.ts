import type { IncomingMessage } from "node:http"
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Either, Option, type Scope, Stream } from "effect"
import { InvalidInput, type PaymentRejected, PaymentsUnavailable, RateLimited, type SettlementFailed } from "../../domain/Errors.js"
import { type Goods, Purchases } from "../../domain/usecases/Purchases.js"
import { Redownloads } from "../../domain/usecases/Redownloads.js"
import { decodePaymentHeader, GOODS_MIME_TYPE, paymentResponseHeader } from "../../codec/Wire.js"
import { receiptExtension, reprDigest } from "../../codec/OfferReceipt.js"
import { Chains } from "../../ports/Chains.js"
import { type CodeHostError, wholeArchiveBytes } from "../../ports/CodeHost.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { RateLimiter } from "../../ports/RateLimiter.js"
import { Api } from "../Api.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { clientAddress } from "./ClientAddress.js"
import { failedSettlement, forBrowser, goodsUnavailable, makeOffer402 } from "./Offer402.js"
import { redownloadAnswer, SIWX_REQUEST_HEADER } from "./Redownload.js"
import { storageAsDefect } from "../Unavailable.js"

/**
 * The platform ends a streamed response cleanly even when its stream fails after the headers went out, which
 * would hand the buyer a truncated archive under a 200. So a failing archive cuts the connection instead:
 * the client sees an error, and the payment presented again or the receipt link delivers it whole.
 */
const abortOnFailure = (body: Goods["body"], request: HttpServerRequest.HttpServerRequest) =>
  body.pipe(Stream.tapErrorCause(() =>
    Effect.sync(() => {
      try {
        // What NodeHttpServerRequest.toIncomingMessage does, without importing @effect/platform-node (its
        // HTTP server, `ws` and undici), which the Lambda bundles would otherwise carry and load at init.
        const incoming = request.source as IncomingMessage
        incoming.socket.destroy()
      } catch {
        // Not a Node request (the Lambda host buffers the body and turns a failure into an error answer).
      }
    })))

/**
 * The archive's first bytes, pulled before any header is committed: a code host that fails at once (a 5xx, a
 * rate limit, a refusal; with GitHub, the first pull is the request for the tarball) is known while a problem
 * can still be answered. The rest streams from where the first pull left off, inside the request's scope
 * (which lasts until the response has been sent). An archive that ends at once is an empty body.
 */
const firstBytes = (body: Goods["body"]): Effect.Effect<Either.Either<Goods["body"], CodeHostError>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pull = yield* Stream.toPull(body)
    for (;;) {
      const next = yield* Effect.either(pull)
      if (Either.isLeft(next)) {
        return Option.match(next.left, {
          onNone: () => Either.right(Stream.empty),
          onSome: (e) => Either.left(e)
        })
      }
      if (Chunk.isNonEmpty(next.right)) {
        return Either.right(Stream.concat(Stream.fromChunk(next.right), Stream.repeatEffectChunkOption(pull)))
      }
    }
  })

/**
 * An archive response: the bytes, with the receipt link, the `Repr-Digest` of the bytes when known before they
 * go out (RFC 9530), the signed receipt in `X-Receipt` and, for a paid request, in the settlement response's
 * `offer-receipt` extension.
 */
const delivery = (goods: Goods, version: 1 | 2 | null, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const signed = goods.signedReceipt === null ? undefined : receiptExtension(goods.signedReceipt)
    const receipt = version === null ? null : paymentResponseHeader(goods.settlement, version, signed)
    const options = {
      contentType: GOODS_MIME_TYPE,
      headers: {
        "content-disposition": `attachment; filename="${goods.filename}"`,
        link: `<${goods.receipt}>; rel="receipt"`,
        "cache-control": "private, no-store",
        ...(goods.digest === null ? {} : { "repr-digest": reprDigest(goods.digest) }),
        ...(goods.signedReceipt === null ? {} : { "x-receipt": goods.signedReceipt }),
        ...(receipt === null ? {} : { [receipt.name.toLowerCase()]: receipt.value })
      }
    }
    // An archive the code host adapter already held whole goes out in one write, with its Content-Length.
    const whole = wholeArchiveBytes(goods.body)
    if (whole !== undefined) return HttpServerResponse.uint8Array(whole, options)
    const started = yield* firstBytes(goods.body)
    if (Either.isLeft(started)) {
      yield* Effect.logWarning(`Paid goods of sale ${goods.sale.id} could not be fetched from the code host (${started.left.reason}): 503 goods_unavailable with the receipt link`)
      return goodsUnavailable(goods, started.left, receipt)
    }
    // Streamed bytes whose digest is known are checked against it as they go (a mismatch aborts the response), so
    // their length is the digest's: the client learns it up front, as for an archive sent in one write.
    return HttpServerResponse.stream(
      abortOnFailure(started.right, request),
      goods.digest === null ? options : { ...options, contentLength: goods.digest.size }
    )
  })

/** Blockhash requests a client address may make a minute: a few per purchase, never a free RPC proxy. */
export const SOLANA_BLOCKHASH_PER_MINUTE = 30

const noStore = HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeader(res, "cache-control", "no-store")))

export const CheckoutHandlers = HttpApiBuilder.group(Api, "checkout", (handlers) =>
  Effect.gen(function*() {
    const purchases = yield* storageAsDefect(Purchases)
    const { baseUrl } = yield* PublicOrigin
    const limiter = yield* RateLimiter
    const chains = yield* Chains
    /** For the checkout page's live Solana payment: the page may not ask an RPC endpoint itself. */
    const solanaBlockhash = Effect.gen(function*() {
      yield* noStore
      const client = yield* clientAddress
      yield* limiter.consume(`checkout:blockhash:${client}`, SOLANA_BLOCKHASH_PER_MINUTE, 60_000).pipe(
        Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: "Too many blockhash requests from this address; try again shortly." }))
      )
      const latest = yield* chains.latestSolanaBlockhash.pipe(
        Effect.mapError(() => new PaymentsUnavailable({ detail: "The server's Solana RPC endpoint did not answer with a recent blockhash. Try again shortly." }))
      )
      if (Option.isNone(latest)) {
        return yield* new PaymentsUnavailable({ detail: "This server reads no Solana RPC endpoint (SOLANA_RPC_URL is off), so live Solana payments cannot be built in the browser. Pay with an x402 client, or on Base." })
      }
      return { blockhash: latest.value.blockhash, last_valid_block_height: latest.value.lastValidBlockHeight }
    })
    const redownloads = yield* storageAsDefect(Redownloads)
    const offer = makeOffer402(purchases, redownloads, baseUrl)
    const redownload = redownloadAnswer(redownloads, offer, (goods, request) => delivery(goods, null, request))

    const checkout = (id: string, livemode: boolean, latest: boolean) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { headers } = request
        if (headers["payment-signature"] === undefined && headers["x-payment"] === undefined) {
          const proof = headers[SIWX_REQUEST_HEADER]
          if (proof !== undefined) return yield* redownload(id, livemode, proof, latest)
          return yield* (prefersHtml(headers["accept"]) ? forBrowser(offer(id, livemode)) : offer(id, livemode))
        }
        const payment = decodePaymentHeader({ "payment-signature": headers["payment-signature"], "x-payment": headers["x-payment"] })
        if (Either.isLeft(payment)) {
          const field = headers["payment-signature"] !== undefined ? "PAYMENT-SIGNATURE" : "X-PAYMENT"
          return yield* InvalidInput.forField(field, payment.left)
        }
        const version = payment.right.x402Version
        return yield* purchases.pay(id, livemode, payment.right, yield* clientAddress, latest).pipe(
          Effect.flatMap((goods) => delivery(goods, version, request)),
          // A refused or failed payment is answered the x402 way: 402 with fresh requirements to pay again.
          Effect.catchTags({
            PaymentRejected: (e: PaymentRejected) => offer(id, livemode, e.reason, {}, e.detail),
            SettlementFailed: (e: SettlementFailed) => {
              const failed = paymentResponseHeader(failedSettlement(e), version)
              return offer(id, livemode, e.reason, { [failed.name.toLowerCase()]: failed.value }, e.detail)
            }
          })
        )
      })

    return handlers
      .handle("checkout", ({ path, urlParams }) => checkout(path.id, true, urlParams.updates === "latest"))
      .handle("testCheckout", ({ path, urlParams }) => checkout(path.id, false, urlParams.updates === "latest"))
      .handle("solanaBlockhash", () => solanaBlockhash)
      .handle("download", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const goods = yield* redownloads.byReceipt(path.token, yield* clientAddress)
          return yield* delivery(goods, null, request)
        }))
      .handle("downloadLatest", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const goods = yield* redownloads.latestByReceipt(path.token, yield* clientAddress)
          return yield* delivery(goods, null, request)
        }))
  }))

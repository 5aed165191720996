import { type HttpServerResponse, HttpServerRequest } from "@effect/platform"
import { Effect, Option, Schema, type Scope } from "effect"
import type * as E from "../../model/Errors.js"
import type { Goods, Purchases, Quote } from "../../usecases/Purchases.js"
import { type Redownloads, SIWX_HEADER, type SiwxChallenge } from "../../usecases/Redownloads.js"
import { siwxExtensions } from "../../codec/SiwxWire.js"
import { encodeHeader, GOODS_MIME_TYPE } from "../../codec/Wire.js"
import { problemResponse } from "../Guard.js"
import * as P from "../Problem.js"
import { clientAddress } from "./ClientAddress.js"
import type { AtTheEdge } from "../Unavailable.js"

/** The request header a wallet's Sign-In-With-X proof arrives in (Node lower-cases header names). */
export const SIWX_REQUEST_HEADER = SIWX_HEADER.toLowerCase()

/** A v2 `PAYMENT-REQUIRED` object that also asks a returning wallet to sign in. */
export const withSiwx = <A extends object>(required: A, siwx: SiwxChallenge): A & { readonly extensions: Record<string, unknown> } => {
  const previous = (required as { readonly extensions?: Record<string, unknown> }).extensions ?? {}
  return { ...required, extensions: { ...previous, ...siwxExtensions(siwx) } }
}

type Unpayable = E.CheckoutGone | E.NotSelling | E.PaymentsUnavailable

const problemOf = (e: Unpayable) => {
  switch (e._tag) {
    case "CheckoutGone":
      return Schema.encodeSync(P.CheckoutGone)(e)
    case "NotSelling":
      return Schema.encodeSync(P.NotSelling)(e)
    case "PaymentsUnavailable":
      return Schema.encodeSync(P.PaymentsUnavailable)(e)
  }
}

/**
 * A checkout that cannot be paid right now (voided 410, not selling 409, live payments off 503) still lets a
 * wallet that paid earlier re-download: its problem answer carries a `PAYMENT-REQUIRED` header with no
 * requirements (`accepts: []`, x402's shape for sign-in only) and the Sign-In-With-X challenge to sign.
 */
const unpayable = (e: Unpayable, siwx: SiwxChallenge, error?: string) => {
  const problem = problemOf(e)
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

export type RenderChallenge = (
  quote: Quote,
  siwx: SiwxChallenge,
  error?: string,
  extraHeaders?: Record<string, string>,
  detail?: string
) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>

/** The checkout answers that involve Sign-In-With-X: every offer carries a challenge; a proof re-downloads. */
export const redownloadAnswers = (
  purchases: AtTheEdge<Purchases>,
  redownloads: AtTheEdge<Redownloads>,
  render: RenderChallenge,
  deliver: (goods: Goods, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope>
) => {
  const orUnpayable = (id: string, livemode: boolean, error?: string) => (e: Unpayable) =>
    Effect.flatMap(redownloads.challengeFor(id, livemode), Option.match({
      onNone: () => Effect.fail(e),
      onSome: (siwx) => Effect.succeed(unpayable(e, siwx, error))
    }))

  /** The 402 with fresh requirements and a fresh challenge, or the problem of a checkout that cannot be paid. */
  const offer = (id: string, livemode: boolean, error?: string, extraHeaders?: Record<string, string>, detail?: string) =>
    purchases.quote(id, livemode).pipe(
      Effect.flatMap((q) => Effect.flatMap(redownloads.challenge(q.checkout, livemode), (siwx) => render(q, siwx, error, extraHeaders, detail))),
      Effect.catchTags({
        CheckoutGone: orUnpayable(id, livemode, error),
        NotSelling: orUnpayable(id, livemode, error),
        PaymentsUnavailable: orUnpayable(id, livemode, error)
      })
    )

  /** A proof and no payment: the wallet's goods (within the re-download limits), or (refused) a fresh offer naming the reason. */
  const redownload = (id: string, livemode: boolean, proof: string) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.flatMap(clientAddress, (client) => redownloads.redeem(id, livemode, proof, client)).pipe(
        Effect.flatMap((goods) => deliver(goods, request)),
        Effect.catchTag("WalletProofRefused", (e) => offer(id, livemode, e.reason))
      ))

  return { offer, redownload } as const
}

import { Chunk, Effect, Either, Option, Stream } from "effect"
import type * as E from "../../model/Errors.js"
import { GoodsUnavailable } from "../../model/Errors.js"
import { type CodeHostError, wholeArchiveBytes } from "../../ports/CodeHost.js"
import type { Goods } from "../../usecases/Purchases.js"
import { receiptExtension } from "../../codec/OfferReceipt.js"
import { GOODS_MIME_TYPE, paymentResponseHeader } from "../../codec/Wire.js"
import { checkoutProblem, GOODS_RETRY_AFTER_SECONDS, isCheckoutFailure } from "../handlers/Offer402.js"
import { type PageError, problemOf as pageProblemOf } from "../pages/ErrorPage.js"
import type * as P from "../Problem.js"
import { MAX_EMBEDDED_BYTES, PAYMENT_RESPONSE_META } from "./McpToolList.js"

/**
 * What the MCP tools answer, as MCP `CallToolResult`s: a use case's failure as the same RFC 9457 problem the
 * HTTP API answers (in `structuredContent`, and as JSON text for clients that read only text), x402's
 * payment-required result, and delivered goods.
 */

/** A `tools/call` result (MCP `CallToolResult`), as this server builds them. */
export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: ReadonlyArray<Record<string, unknown>>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
  readonly _meta?: Record<string, unknown>
}

/** Every failure a tool can meet, besides the payment refusals answered as payment-required. */
export type ToolError =
  | PageError
  | E.CheckoutGone
  | E.NotSelling
  | E.PaymentIdConflict
  | E.ReceiptExpired
  | E.UpdateRefused
  | E.GoodsUnavailable
  | E.PaymentsUnavailable
  | E.SettlementPending

/**
 * A failure as the problem the HTTP API answers for it (same status, code, title and detail): a checkout's,
 * a payment's or a re-download's from `Offer402`'s table, any other (a search's, a preview's) as pages answer it.
 */
export const problemOf = (error: ToolError): P.ProblemJson => isCheckoutFailure(error) ? checkoutProblem(error) : pageProblemOf(error)

/**
 * A problem as a tool error: the problem object itself is the structured content, with `extra` fields beside
 * it (a checkout that cannot be paid adds the Sign-In-With-X challenge its HTTP answer carries).
 */
export const problemResult = (problem: P.ProblemJson, extra: Record<string, unknown> = {}): ToolResult => ({
  isError: true,
  content: [{ type: "text", text: JSON.stringify({ ...problem, ...extra }) }],
  structuredContent: { ...problem, ...extra }
})

/** A successful answer: the data as structured content and as JSON text. */
export const dataResult = (data: Record<string, unknown>): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(data) }],
  structuredContent: data
})

/**
 * The x402 settlement object, exactly as the HTTP answer's `PAYMENT-RESPONSE` header carries it (v2): with the
 * signed receipt as its `offer-receipt` extension when there is one.
 */
export const settlementObject = (settlement: Goods["settlement"], signedReceipt: string | null = null): Record<string, unknown> =>
  JSON.parse(
    Buffer.from(paymentResponseHeader(settlement, 2, signedReceipt === null ? undefined : receiptExtension(signedReceipt)).value, "base64").toString("utf8")
  ) as Record<string, unknown>

/**
 * x402's payment-required tool result (specs/transports-v2/mcp.md): `isError`, the `PaymentRequired` object as
 * `structuredContent` (with the failed settlement under `x402/payment-response`, when there is one) and, as the
 * spec requires, the `x402/error` wrapper as the first text. A second text says the same to a person or a model.
 */
export const paymentRequiredResult = (
  required: { readonly error: string; readonly accepts: ReadonlyArray<unknown> } & Record<string, unknown>,
  explanation: string,
  failedSettlement?: Record<string, unknown>
): ToolResult => {
  const structured = failedSettlement === undefined ? { ...required } : { ...required, [PAYMENT_RESPONSE_META]: failedSettlement }
  return {
    isError: true,
    content: [
      { type: "text", text: JSON.stringify({ "x402/error": { code: 402, message: required.error, data: structured } }) },
      { type: "text", text: explanation }
    ],
    structuredContent: structured
  }
}


/** The archive's bytes when they fit in `max`, None when larger; a code host that cannot give them fails. */
const archiveUpTo = (body: Goods["body"], max: number): Effect.Effect<Option.Option<Uint8Array>, CodeHostError> => {
  const whole = wholeArchiveBytes(body)
  if (whole !== undefined) return Effect.succeed(whole.length <= max ? Option.some(whole) : Option.none())
  return Stream.runFoldWhile(
    body,
    { chunks: Chunk.empty<Uint8Array>(), size: 0 },
    (s) => s.size <= max,
    (s, chunk) => ({ chunks: Chunk.append(s.chunks, chunk), size: s.size + chunk.length })
  ).pipe(Effect.map((s) => s.size > max ? Option.none() : Option.some(Buffer.concat(Chunk.toReadonlyArray(s.chunks)))))
}

/**
 * Paid (or re-downloaded) goods as a tool result: a summary, the receipt as a `resource_link`, the archive as
 * an embedded `application/gzip` resource when asked for and small enough, and for a purchase the settlement in
 * `_meta["x402/payment-response"]`. A code host that cannot give the archive now is the HTTP answer's
 * `goods_unavailable` with the receipt link: the sale stays settled and the goods are owed, never lost.
 */
export const goodsResult = (goods: Goods, options: { readonly embed: boolean; readonly paid: boolean }) =>
  Effect.gen(function*() {
    const sale = goods.sale
    const settlement = settlementObject(goods.settlement, goods.signedReceipt)
    const archive = options.embed ? yield* Effect.either(archiveUpTo(goods.body, MAX_EMBEDDED_BYTES)) : Either.right(Option.none())
    if (Either.isLeft(archive)) {
      const e = archive.left
      const problem = problemOf(new GoodsUnavailable({
        receipt: goods.receipt,
        retryAfterSeconds: e.retryAfterSeconds ?? GOODS_RETRY_AFTER_SECONDS,
        detail: "This purchase is paid and recorded, but the code host could not deliver its archive just now. Nothing is lost: the receipt link downloads the same commit for 7 days after payment; try it (or redownload) shortly."
      }))
      const failed = problemResult(problem)
      return options.paid ? { ...failed, _meta: { [PAYMENT_RESPONSE_META]: settlement } } : failed
    }
    const embedded = Option.getOrNull(archive.right)
    // An update delivery's goods are its commit's, under its own receipt; the purchase's are the commit paid for.
    const commit = goods.update?.commitSha ?? sale.commitSha
    const data = {
      repo: sale.repo,
      commit,
      // The update delivery's id (dlv_…) when these are a newer commit within the purchase's update window.
      ...(goods.update === null ? {} : { delivery: goods.update.id }),
      // The archive's SHA-256 and size when known before delivery (the HTTP answer's Repr-Digest), else null.
      archive: goods.digest === null ? null : { sha256: goods.digest.sha256, size: goods.digest.size },
      filename: goods.filename,
      receipt: goods.receipt,
      // The signed receipt (JWS, x402 offer-receipt), as the HTTP answer's X-Receipt; verify with /.well-known/jwks.json.
      signed_receipt: goods.signedReceipt,
      livemode: sale.livemode,
      network: sale.network,
      transaction: sale.transaction,
      payer: sale.payer,
      archive_embedded: embedded !== null
    }
    const summary = `${options.paid ? "Paid" : "Downloaded"} ${sale.repo}${sale.livemode ? "" : " (test twin: simulated money, a manifest instead of the code)"} at commit ${commit ?? "unknown"}${goods.update === null ? "" : " (an update after purchase)"}. ` +
      `GET ${goods.receipt} downloads ${goods.filename} (application/gzip) for 7 days after payment.` +
      (options.embed && embedded === null ? ` The archive is larger than ${MAX_EMBEDDED_BYTES} bytes, so it is not embedded: use the receipt link.` : "")
    const content: Array<Record<string, unknown>> = [
      { type: "text", text: summary },
      { type: "resource_link", uri: goods.receipt, name: goods.filename, mimeType: GOODS_MIME_TYPE, description: `The purchased archive of ${sale.repo}; the link works for 7 days after payment.` }
    ]
    if (embedded !== null) {
      content.push({ type: "resource", resource: { uri: goods.receipt, mimeType: GOODS_MIME_TYPE, blob: Buffer.from(embedded).toString("base64") } })
    }
    return {
      content,
      structuredContent: data,
      ...(options.paid ? { _meta: { [PAYMENT_RESPONSE_META]: settlement } } : {})
    } satisfies ToolResult
  })

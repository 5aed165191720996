import { Cause, Chunk, Effect, Either, Option, Stream } from "effect"
import type * as E from "../../domain/Errors.js"
import { GoodsUnavailable } from "../../domain/Errors.js"
import { type CodeHostError, wholeArchiveBytes } from "../../ports/CodeHost.js"
import type { Goods } from "../../domain/usecases/Purchases.js"
import { receiptExtension } from "../../codec/OfferReceipt.js"
import { GOODS_MIME_TYPE, paymentResponseHeader } from "../../codec/Wire.js"
import { checkoutProblem, GOODS_RETRY_AFTER_SECONDS, isCheckoutFailure } from "../handlers/Offer402.js"
import { type PageError, problemOf as pageProblemOf } from "../pages/ErrorPage.js"
import { problemBody } from "../Problem.js"
import type * as P from "../Problem.js"
import { databaseUnavailableProblem, isDatabaseUnavailable } from "../Unavailable.js"
import type { RepoPage } from "../Schemas.js"
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

/**
 * A tool call that died, answered as the HTTP guard answers a request that did (`app/Guard.ts`), as a tool
 * error rather than a JSON-RPC -32603: the database not answering in time is 503 `database_unavailable` with
 * `retry_after_seconds` (HTTP's Retry-After), anything else 500 `internal_error`. Logged as the guard logs it.
 */
export const diedResult = (cause: Cause.Cause<unknown>): Effect.Effect<ToolResult> =>
  isDatabaseUnavailable(cause)
    ? Effect.as(Effect.logWarning("MCP tool call: the database did not answer in time: 503"), problemResult(databaseUnavailableProblem()))
    : Effect.as(
      Effect.logError("MCP tool call failed", Cause.pretty(cause)),
      problemResult(problemBody(500, "internal_error", "Internal error", "Something went wrong on our side; nothing was changed by this request."))
    )

/** A successful answer: the data as structured content and as JSON text. */
export const dataResult = (data: Record<string, unknown>): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(data) }],
  structuredContent: data
})

/** The most of a README's Markdown a `get_repo` result carries; the repo page has the whole of it. */
export const README_PREVIEW_BYTES = 16 * 1024

/** The most of a file tree (as JSON) a `get_repo` result carries; the repo page has the whole of it. */
export const TREE_PREVIEW_BYTES = 32 * 1024

/** The first `max` bytes of `text` as UTF-8, never cutting a character. */
const clipUtf8 = (text: string, max: number): string => {
  if (Buffer.byteLength(text, "utf8") <= max) return text
  const head = text.slice(0, max)
  const bytes = Buffer.from(/[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head, "utf8").subarray(0, max)
  return new TextDecoder().decode(bytes).replace(/\uFFFD+$/, "")
}

type RepoPageJson = typeof RepoPage.Type

/**
 * `get_repo`'s result: the repo page's JSON once, as `structuredContent`, with a preview of what can be large
 * (the README's Markdown up to `README_PREVIEW_BYTES`, without its HTML rendering; the tree's first entries up to
 * `TREE_PREVIEW_BYTES`, `truncated` when any were left out), and as content a short summary and a
 * `resource_link` to the whole page (`page_url`, the same JSON with `Accept: application/json`).
 */
export const repoResult = (page: RepoPageJson, baseUrl: string): ToolResult => {
  const pageUrl = baseUrl + page.page
  const readme = page.readme === null ? null : (() => {
    const markdown = clipUtf8(page.readme.markdown, README_PREVIEW_BYTES)
    return { path: page.readme.path, markdown, truncated: markdown.length < page.readme.markdown.length }
  })()
  const tree = page.tree === null ? null : (() => {
    const entries: Array<NonNullable<RepoPageJson["tree"]>["entries"][number]> = []
    let size = 0
    for (const entry of page.tree.entries) {
      size += Buffer.byteLength(JSON.stringify(entry), "utf8") + 1
      if (size > TREE_PREVIEW_BYTES) break
      entries.push(entry)
    }
    return { entries, truncated: page.tree.truncated || entries.length < page.tree.entries.length }
  })()
  const data = { ...page, page_url: pageUrl, readme, tree }
  const price = page.price_usd === null ? "not priced" : `${page.price_usd} USD in USDC on ${page.chains.join(" or ")}`
  const cut = (readme?.truncated ?? false) || (tree?.truncated ?? false)
  const summary = `${page.repo}: ${price}${page.commit === null ? "" : `, commit ${page.commit}`}${page.selling ? "" : ` (not for sale: ${page.note})`}. ` +
    `The page's data is the structured content${cut ? `, with a preview of the ${[readme?.truncated ? "README" : "", tree?.truncated ? "file tree" : ""].filter((w) => w !== "").join(" and ")}` : ""}; ` +
    `the whole page is ${pageUrl} (JSON with Accept: application/json; it counts as a page view). ` +
    (page.selling ? `Buy with buy_repo and checkout_url ${page.checkout_url} (test_checkout_url ${page.test_checkout_url} rehearses with simulated money).` : "")
  return {
    content: [
      { type: "text", text: summary },
      {
        type: "resource_link",
        uri: pageUrl,
        name: `${page.repo} repo page`,
        mimeType: "application/json",
        description: `The whole repo page of ${page.repo}: README (Markdown and HTML) and file tree. GET with Accept: application/json.`
      }
    ],
    structuredContent: data
  }
}

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

import { describe, expect, it } from "vitest"
import { checkoutProblem, GOODS_RETRY_AFTER_SECONDS, goodsUnavailable, isCheckoutFailure } from "../../app/handlers/Offer402.js"
import { problemOf as mcpProblemOf } from "../../app/mcp/McpResults.js"
import * as E from "../../domain/Errors.js"
import { CodeHostError } from "../../ports/CodeHost.js"
import type { Goods } from "../../domain/usecases/Purchases.js"

/**
 * The one table of the checkout's problems (app/handlers/Offer402.ts): every failure a checkout, a payment or a
 * re-download answers as a problem, with the status and code the API documents, and the same problem through
 * the MCP tools as over HTTP. Written out here so a row that changes fails by name.
 */
const PAGE = "https://market.test/r/octo-org/widget"
const RECEIPT = "https://market.test/downloads/tok"

const rows: ReadonlyArray<readonly [E.InvalidInput | E.NotFound | E.CheckoutGone | E.NotSelling | E.PaymentIdConflict | E.RateLimited | E.PaymentsUnavailable | E.SettlementPending | E.HostUnavailable | E.GoodsUnavailable | E.ReceiptExpired | E.UpdateRefused, number, string, Record<string, unknown>]> = [
  [E.InvalidInput.forField("PAYMENT-SIGNATURE", "is not base64"), 400, "invalid_request", { errors: [{ field: "PAYMENT-SIGNATURE", message: "is not base64" }] }],
  [new E.NotFound({ detail: "No such checkout." }), 404, "not_found", {}],
  [new E.CheckoutGone({ page: PAGE, detail: "replaced" }), 410, "checkout_gone", { page: PAGE }],
  [new E.NotSelling({ page: PAGE, detail: "no price" }), 409, "not_selling", { page: PAGE }],
  [new E.PaymentIdConflict({ detail: "another payment" }), 409, "payment_id_conflict", {}],
  [new E.RateLimited({ retryAfterSeconds: 12, detail: "slow down" }), 429, "rate_limited", { retry_after_seconds: 12 }],
  [new E.PaymentsUnavailable({ detail: "live payments off" }), 503, "payments_unavailable", {}],
  [new E.SettlementPending({ retryAfterSeconds: 5, detail: "not confirmed" }), 503, "settlement_pending", { retry_after_seconds: 5 }],
  [new E.HostUnavailable({ retryAfterSeconds: null, detail: "code host down" }), 503, "host_unavailable", {}],
  [new E.GoodsUnavailable({ receipt: RECEIPT, retryAfterSeconds: 30, detail: "owed" }), 503, "goods_unavailable", { receipt: RECEIPT, retry_after_seconds: 30 }],
  [new E.ReceiptExpired({ page: PAGE, detail: "expired" }), 410, "receipt_expired", { page: PAGE }],
  ...(["updates_not_included", "updates_window_closed", "listing_taken_down"] as const).map((reason) =>
    [new E.UpdateRefused({ reason, receipt: RECEIPT, detail: "yours: the commit paid for" }), 403, reason, { reason, receipt: RECEIPT }] as const
  )
]

describe("the checkout's problem table", () => {
  it.each(rows.map((r) => [`${r[0]._tag} ${r[2]}`, ...r] as const))("%s: its status and code, the same through MCP", (_tag, error, status, code, extra) => {
    expect(isCheckoutFailure(error)).toBe(true)
    const problem = checkoutProblem(error)
    expect(problem).toEqual({
      type: `https://repomarket.dev/problems/${code.replace(/_/g, "-")}`,
      title: expect.any(String),
      status,
      code,
      detail: error.detail,
      ...extra
    })
    expect(mcpProblemOf(error)).toEqual(problem)
  })

  it("holds only the checkout's failures: a search's is left to the pages' table", () => {
    const busy = new E.SearchUnavailable({ reason: "search_busy", retryAfterSeconds: 1, detail: "busy" })
    expect(isCheckoutFailure(busy)).toBe(false)
    expect(isCheckoutFailure({ _tag: "toString" })).toBe(false)
    expect(mcpProblemOf(busy)).toMatchObject({ status: 503, code: "search_busy" })
  })

  it("goods the code host cannot give now: 503 with the receipt link, Retry-After (30 s unless told) and the settlement receipt", () => {
    const goods = { receipt: RECEIPT } as Goods
    const answer = goodsUnavailable(goods, new CodeHostError({ reason: "unavailable", message: "down" }), { name: "PAYMENT-RESPONSE", value: "eyJ9" })
    expect(answer.status).toBe(503)
    expect(answer.headers).toMatchObject({
      link: `<${RECEIPT}>; rel="receipt"`,
      "cache-control": "no-store",
      "retry-after": String(GOODS_RETRY_AFTER_SECONDS),
      "payment-response": "eyJ9"
    })
    const told = goodsUnavailable(goods, new CodeHostError({ reason: "rate_limited", retryAfterSeconds: 90, message: "quota" }), null)
    expect(told.headers["retry-after"]).toBe("90")
    expect(told.headers["payment-response"]).toBeUndefined()
    expect(GOODS_RETRY_AFTER_SECONDS).toBe(30)
  })
})

import { expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_URL, BASE_WALLET, PUBLIC_REPO } from "../support/app.js"
import { PurchaseApp, REAL_TIME, sell, WIDGET_SHA } from "../support/purchase.js"
import { callTool } from "./doors.js"

// Updates after purchase through MCP (issue 30): `get_repo` names the update window, and `redownload` with
// `latest: true` gives the listing's current commit within it as a new delivery, or the HTTP API's 403 problem.

const PUSHED_SHA = "fedcba9876543210fedcba9876543210fedcba98"

/** Lists the widget (with `updates_days` when given) and buys it through `buy_repo` on the test twin; its receipt. */
const boughtOverMcp = (email: string, updatesDays?: number) =>
  Effect.gen(function*() {
    const seller = yield* sell(email, { price_usd: "0.50", wallet_base: BASE_WALLET, ...(updatesDays === undefined ? {} : { updates_days: updatesDays }) })
    const checkout = seller.listing.test_checkout_url
    const required = (yield* callTool("buy_repo", { checkout_url: checkout })).structuredContent
    const payment = yield* Effect.promise(() =>
      new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey()))).createPaymentPayload(required))
    const paid = yield* callTool("buy_repo", { checkout_url: checkout }, { "x402/payment": payment })
    expect(paid.isError, JSON.stringify(paid).slice(0, 500)).not.toBe(true)
    expect(paid.structuredContent.commit).toBe(WIDGET_SHA)
    yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...PUBLIC_REPO, headSha: PUSHED_SHA }))
    return paid.structuredContent.receipt as string
  })

layer(PurchaseApp(), REAL_TIME)("MCP: updates within the window", (it) => {
  it.effect("get_repo names updates_days; redownload latest: the pushed commit with a receipt of its own; without latest: the commit paid for", () =>
    Effect.gen(function*() {
      const receipt = yield* boughtOverMcp("mcp-updates@example.com", 30)
      expect((yield* callTool("get_repo", { repo: "octo-org/widget" })).structuredContent).toMatchObject({ updates_days: 30 })
      const latest = yield* callTool("redownload", { receipt, latest: true })
      expect(latest.isError, JSON.stringify(latest).slice(0, 500)).not.toBe(true)
      expect(latest.structuredContent.commit).toBe(PUSHED_SHA)
      expect(latest.structuredContent.receipt).toMatch(new RegExp(`^${BASE_URL}/downloads/dlv_`))
      expect((yield* callTool("redownload", { receipt })).structuredContent.commit).toBe(WIDGET_SHA)
    }))
})

layer(PurchaseApp(), REAL_TIME)("MCP: no updates offered", (it) => {
  it.effect("redownload latest is the HTTP API's 403 updates_not_included, naming the purchase's own receipt", () =>
    Effect.gen(function*() {
      const receipt = yield* boughtOverMcp("mcp-no-updates@example.com")
      const refused = yield* callTool("redownload", { receipt, latest: true })
      expect(refused).toMatchObject({ isError: true, structuredContent: { status: 403, code: "updates_not_included", receipt } })
    }))
})

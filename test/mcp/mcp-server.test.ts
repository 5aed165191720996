import { expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_URL, BASE_WALLET, call } from "../support/app.js"
import {
  bytesOf,
  challenge,
  expectTestGoods,
  get,
  local,
  origin,
  PurchaseApp,
  REAL_TIME,
  salesOf,
  sell,
  WIDGET_FILENAME,
  WIDGET_SHA
} from "../support/purchase.js"
import { callTool, embeddedArchive, mcpTransport } from "./doors.js"

const SEPOLIA = "eip155:84532"

layer(PurchaseApp(), REAL_TIME)("the MCP server at /mcp, through the official MCP client over Streamable HTTP", (it) => {
  it.effect("lists four tools, each with a description and a JSON Schema of its arguments", () =>
    Effect.gen(function*() {
      const o = yield* origin
      const { instructions, tools } = yield* Effect.promise(async () => {
        const client = new Client({ name: "repomarket-tests", version: "1.0.0" })
        await client.connect(mcpTransport(o))
        try {
          return { tools: (await client.listTools()).tools, instructions: client.getInstructions() }
        } finally {
          await client.close()
        }
      })
      expect(tools.map((t) => t.name)).toEqual(["search_listings", "get_repo", "buy_repo", "redownload"])
      for (const tool of tools) {
        expect(tool.description!.length).toBeGreaterThan(80)
        expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false })
      }
      expect(tools.find((t) => t.name === "buy_repo")!.inputSchema.required).toEqual(["checkout_url"])
      expect(instructions).toContain("x402/payment")
    }))

  it.effect("searches, previews and buys the widget through the test twin, paying per the x402 MCP transport", () =>
    Effect.gen(function*() {
      const seller = yield* sell("mcp-buyer@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })

      const found = yield* callTool("search_listings", { q: "widget", chain: "base", max_price_usd: 20 })
      expect(found.isError).not.toBe(true)
      expect(found.structuredContent.listings).toEqual([expect.objectContaining({
        repo: "Octo-Org/Widget",
        price_usd: "0.50",
        checkout_url: seller.listing.checkout_url,
        test_checkout_url: seller.listing.test_checkout_url
      })])
      expect(JSON.parse(found.content[0].text)).toEqual(found.structuredContent)

      const page = yield* callTool("get_repo", { repo: "octo-org/widget" })
      expect(page.structuredContent).toMatchObject({ price_usd: "0.50", commit: WIDGET_SHA, test_checkout_url: seller.listing.test_checkout_url })
      expect(page.structuredContent.tree.entries.map((e: { path: string }) => e.path)).toEqual(["README.md", "src", "src/index.ts"])

      // Unpaid: x402's payment-required result, with the same terms as the checkout's HTTP 402.
      const checkout = seller.listing.test_checkout_url
      const unpaid = yield* callTool("buy_repo", { checkout_url: checkout })
      expect(unpaid.isError).toBe(true)
      const required = unpaid.structuredContent
      const http402 = (yield* challenge(seller.test)).required
      expect(required).toMatchObject({ x402Version: 2, error: "payment_required", resource: { url: checkout, mimeType: "application/gzip" } })
      expect(required.accepts).toEqual(http402.accepts)
      expect(Object.keys(required.extensions).sort()).toEqual(Object.keys(http402.extensions).sort())
      const wrapped = JSON.parse(unpaid.content[0].text)["x402/error"]
      expect(wrapped).toMatchObject({ code: 402, data: { accepts: http402.accepts } })

      // The official x402 client picks and signs a requirement; the tool is called again with it in _meta.
      const buyer = privateKeyToAccount(generatePrivateKey())
      const payment = yield* Effect.promise(() => new x402Client().register("eip155:*", new ExactEvmScheme(buyer)).createPaymentPayload(required))
      const paid = yield* callTool("buy_repo", { checkout_url: checkout, include_archive: true }, { "x402/payment": payment })
      expect(paid.isError, JSON.stringify(paid).slice(0, 500)).not.toBe(true)
      expect(paid._meta["x402/payment-response"]).toMatchObject({ success: true, network: SEPOLIA, payer: buyer.address })
      expect(paid.structuredContent).toMatchObject({ repo: "Octo-Org/Widget", commit: WIDGET_SHA, filename: WIDGET_FILENAME, livemode: false, archive_embedded: true })
      const receipt: string = paid.structuredContent.receipt
      expect(receipt.startsWith(`${BASE_URL}/downloads/`)).toBe(true)
      expect(paid.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri: receipt, mimeType: "application/gzip" }))
      const archive = embeddedArchive(paid)!
      expectTestGoods(archive)
      const sales = yield* salesOf(seller.accountId)
      expect(sales).toHaveLength(1)
      expect(sales[0]).toMatchObject({ status: "settled", payer: buyer.address, livemode: false })

      // The receipt: over HTTP, and through the redownload tool, the same bytes.
      expect((yield* bytesOf(yield* get(yield* local(receipt)))).equals(archive)).toBe(true)
      const again = yield* callTool("redownload", { receipt })
      expect(again.isError).not.toBe(true)
      expect(embeddedArchive(again)!.equals(archive)).toBe(true)
      expect(again._meta?.["x402/payment-response"]).toBeUndefined()
    }))

  it.effect("answers bad arguments and unknown things with the HTTP API's problems, and buys nothing", () =>
    Effect.gen(function*() {
      const misspelt = yield* callTool("search_listings", { max_price: 5 })
      expect(misspelt).toMatchObject({ isError: true, structuredContent: { status: 400, code: "invalid_request", errors: [{ field: "max_price" }] } })
      const missing = yield* callTool("get_repo", { repo: "octo-org/no-such-repo" })
      expect(missing.structuredContent).toMatchObject({ status: 404, code: "not_found" })
      const elsewhere = yield* callTool("buy_repo", { checkout_url: "https://evil.example/checkout/chk_x/test" })
      expect(elsewhere.structuredContent).toMatchObject({ status: 400, code: "invalid_request", errors: [{ field: "checkout_url" }] })
      const unknown = yield* callTool("buy_repo", { checkout_url: `${BASE_URL}/checkout/chk_nosuchcheckout/test` })
      expect(unknown.structuredContent).toMatchObject({ status: 404, code: "not_found" })
      const junkReceipt = yield* callTool("redownload", { receipt: `${BASE_URL}/downloads/not-a-receipt` })
      expect(junkReceipt.structuredContent).toMatchObject({ status: 404, code: "not_found" })
      const junkMeta = yield* callTool("buy_repo", { checkout_url: `${BASE_URL}/checkout/chk_x/test` }, { "x402/payment": "a string" })
      expect(junkMeta.structuredContent).toMatchObject({ status: 400, code: "invalid_request", errors: [{ field: "_meta.x402/payment" }] })
    }))

  it.effect("takes only POST: GET and DELETE /mcp are 405 with Allow: POST (no stream, no session)", () =>
    Effect.gen(function*() {
      const o = yield* origin
      for (const method of ["GET", "DELETE"]) {
        const res = yield* Effect.promise(() => fetch(`${o}/mcp`, { method, headers: { accept: "text/event-stream" } }))
        expect(res.status).toBe(405)
        expect(res.headers.get("allow")).toBe("POST")
      }
    }))
})

layer(PurchaseApp({ config: { PUBLIC_PAGES_PER_MINUTE: "3" } }), REAL_TIME)("the MCP tools and the public pages share one budget per client address", (it) => {
  it.effect("previews through MCP and HTTP count together; past the limit, 429 rate_limited with retry_after_seconds, as over HTTP", () =>
    Effect.gen(function*() {
      yield* sell("mcp-limits@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      expect((yield* callTool("get_repo", { repo: "octo-org/widget" })).isError).not.toBe(true)
      expect((yield* call("GET", "/r/octo-org/widget", { headers: { accept: "application/json" } })).status).toBe(200)
      expect((yield* callTool("search_listings", {})).isError).not.toBe(true)
      const limited = yield* callTool("get_repo", { repo: "octo-org/widget" })
      expect(limited).toMatchObject({ isError: true, structuredContent: { status: 429, code: "rate_limited" } })
      expect(limited.structuredContent.retry_after_seconds).toBeGreaterThan(0)
      // (With a query string: the front door serves a page it remembers without counting it.)
      expect((yield* call("GET", "/r/octo-org/widget?again", { headers: { accept: "application/json" } })).status).toBe(429)
    }))
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_URL, BASE_WALLET, call } from "../support/app.js"
import { PurchaseApp, REAL_TIME, sell } from "../support/purchase.js"

// `/.well-known/x402` checked against the `discovery` extension's rules (x402-foundation/x402 PR #2979,
// specs/extensions/discovery.md): an integer x402Version, a kind, resources as bare pointers on the host's own
// origin; and /llms.txt naming the MCP server first.

const BARE_POINTER_FIELDS = new Set(["url", "method", "description"])

layer(PurchaseApp(), REAL_TIME)("/.well-known/x402", (it) => {
  it.effect("is the host's x402 manifest: networks, assets, checkouts as bare pointers, the MCP server and the agent docs", () =>
    Effect.gen(function*() {
      const seller = yield* sell("well-known@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const res = yield* call("GET", "/.well-known/x402")
      expect(res.status, res.text).toBe(200)
      expect(res.headers["content-type"]).toMatch(/^application\/json/)
      expect(res.headers["cache-control"]).toMatch(/^public, max-age=\d+$/)
      expect(res.headers["access-control-allow-origin"]).toBe("*")
      const manifest = res.json

      expect(manifest).toMatchObject({ x402Version: 2, kind: "resource-server", name: "repomarket" })
      expect(Number.isInteger(manifest.x402Version)).toBe(true)
      expect(Number.isNaN(Date.parse(manifest.updated))).toBe(false)
      for (const resource of manifest.resources) {
        expect(Object.keys(resource).every((k) => BARE_POINTER_FIELDS.has(k)), JSON.stringify(resource)).toBe(true)
        expect(new URL(resource.url).origin).toBe(BASE_URL)
      }
      const urls = manifest.resources.map((r: { url: string }) => r.url)
      // No live facilitator in this app: only the test twin is payable, and only it is listed.
      expect(urls).toEqual([`${BASE_URL}/mcp`, seller.listing.test_checkout_url])
      expect(manifest.payments.networks.map((n: { network: string }) => n.network)).toEqual(
        expect.arrayContaining(["eip155:8453", "eip155:84532", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"])
      )
      expect(manifest.payments.assets).toContainEqual({ network: "eip155:8453", address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", symbol: "USDC", decimals: 6, standard: "EIP-3009" })
      expect(manifest.mcp).toMatchObject({ url: `${BASE_URL}/mcp`, transport: "streamable-http", paidTools: ["buy_repo"] })
      expect(manifest.links).toMatchObject({ llms_txt: `${BASE_URL}/llms.txt`, openapi: `${BASE_URL}/openapi.json`, mcp: `${BASE_URL}/mcp` })
    }))

  it.effect("/llms.txt names the MCP server first, with a one-line client config", () =>
    Effect.gen(function*() {
      const res = yield* call("GET", "/llms.txt")
      const sections = res.text.split("\n").filter((line) => line.startsWith("## "))
      expect(sections[0]).toBe("## MCP server (agents: start here)")
      expect(res.text).toContain(`{"mcpServers":{"repomarket":{"url":"${BASE_URL}/mcp"}}}`)
      expect(res.text).toContain(`${BASE_URL}/.well-known/x402`)
    }))
})

/*
 * `GET /checkout/solana/blockhash`: the checkout page's way to a recent Solana blockhash (its CSP lets it talk to
 * no origin but ours). The server asks its own Solana RPC endpoint (SOLANA_RPC_URL, here msw with a key in the
 * URL that must never show), answers no-store, counts 30 a minute per client address, and says 503
 * payments_unavailable when the endpoint is off, down or answers nonsense.
 */
import { afterAll, afterEach, beforeAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { setupServer } from "msw/node"
import { call, TestApp } from "../support/app.js"
import { chain, chainRpcHandlers } from "../support/chainRpc.js"

const SOLANA_RPC = "https://solana-rpc.test/SOLKEY-0123456789"
const server = setupServer(...chainRpcHandlers("https://base-rpc.test/v2/BASEKEY-0123456789", SOLANA_RPC))
const FRESH = { ...chain.blockhash! }

beforeAll(() => server.listen({ onUnhandledRequest: "bypass" }))
afterEach(() => {
  chain.down = false
  chain.blockhash = { ...FRESH }
  chain.calls.length = 0
})
afterAll(() => server.close())

const problem = (res: { status: number; text: string; headers: Record<string, string> }, status: number, code: string) => {
  expect(res.status, res.text).toBe(status)
  expect(res.headers["content-type"]).toContain("application/problem+json")
  const body = JSON.parse(res.text)
  expect(body.code).toBe(code)
  expect(res.text).not.toContain("SOLKEY")
  return body
}

describe("GET /checkout/solana/blockhash", () => {
  layer(TestApp({ config: { SOLANA_RPC_URL: SOLANA_RPC } }))((it) => {
    it.effect("answers the RPC endpoint's latest confirmed blockhash, not cached", () =>
      Effect.gen(function*() {
        const res = yield* call("GET", "/checkout/solana/blockhash")
        expect(res.status, res.text).toBe(200)
        expect(JSON.parse(res.text)).toEqual({ blockhash: FRESH.blockhash, last_valid_block_height: FRESH.lastValidBlockHeight })
        expect(res.headers["cache-control"]).toBe("no-store")
        expect(chain.calls).toEqual(["solana:getLatestBlockhash"])
      }))

    it.effect("the RPC endpoint down, or answering without a blockhash: 503 payments_unavailable, the URL's key never shown", () =>
      Effect.gen(function*() {
        chain.down = true
        const down = problem(yield* call("GET", "/checkout/solana/blockhash"), 503, "payments_unavailable")
        expect(down.detail).toMatch(/did not answer with a recent blockhash/)
        chain.down = false
        chain.blockhash = null
        problem(yield* call("GET", "/checkout/solana/blockhash"), 503, "payments_unavailable")
        chain.blockhash = { blockhash: "not base58 0OIl", lastValidBlockHeight: 1 }
        problem(yield* call("GET", "/checkout/solana/blockhash"), 503, "payments_unavailable")
      }))

    it.effect("documented in the OpenAPI document", () =>
      Effect.gen(function*() {
        const spec = JSON.parse((yield* call("GET", "/openapi.json")).text)
        expect(Object.keys(spec.paths["/checkout/solana/blockhash"] ?? {})).toEqual(["get"])
        const answers = Object.keys(spec.paths["/checkout/solana/blockhash"].get.responses).sort()
        expect(answers).toEqual(expect.arrayContaining(["200", "429", "503"]))
      }))
  })

  // A fresh app, so that its limiter counts from nothing (every request here comes from the same loopback address).
  layer(TestApp({ config: { SOLANA_RPC_URL: SOLANA_RPC } }))((it) => {
    it.effect("30 a minute per client address, then 429 rate_limited with Retry-After; the RPC endpoint is not asked past the limit", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 30; i++) expect((yield* call("GET", "/checkout/solana/blockhash")).status).toBe(200)
        const asked = chain.calls.length
        const limited = problem(yield* call("GET", "/checkout/solana/blockhash"), 429, "rate_limited")
        expect(limited.retry_after_seconds).toBeGreaterThan(0)
        expect(chain.calls.length).toBe(asked)
      }))
  })

  layer(TestApp())((it) => {
    it.effect("SOLANA_RPC_URL off: 503 payments_unavailable that says so", () =>
      Effect.gen(function*() {
        const off = problem(yield* call("GET", "/checkout/solana/blockhash"), 503, "payments_unavailable")
        expect(off.detail).toMatch(/SOLANA_RPC_URL is off/)
        expect(chain.calls).toEqual([])
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { delay, http, HttpResponse } from "msw"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { recordingFacilitator } from "../support/recordingFacilitator.js"
import { BASE_WALLET, PUBLIC_REPO } from "../support/app.js"
import {
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  expectGoods,
  expectProblemResponse,
  get,
  local,
  onlySale,
  payWith,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  salesOf,
  sell,
  signEvm,
  unb64,
  WIDGET_SHA
} from "../support/purchase.js"

const FACILITATOR = "https://facilitator.test"
const BASE = "eip155:8453"
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const TX = "0x9f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100"
/** What the in-memory code host streams as the widget's archive at the pinned commit. */
const WIDGET_ARCHIVE = "0123456 README.md\n# Widget\n\nHello <script>alert(1)</script>\n\n0123456 src/index.ts\nexport {}\n\n"

// The live facilitator is msw; every call it gets is logged, and a call nobody answered is a 500.
const { calls, server: facilitator } = recordingFacilitator(FACILITATOR)

const answer = (path: "verify" | "settle", respond: () => Response | Promise<Response>) =>
  facilitator.use(http.post(`${FACILITATOR}/${path}`, async ({ request }) => {
    calls.push({ path: `/${path}`, body: await request.json() })
    return respond()
  }))

const verifyOk = (payer: string) => answer("verify", () => HttpResponse.json({ isValid: true, payer }))
const settleOk = (payer: string) => answer("settle", () => HttpResponse.json({ success: true, transaction: TX, network: BASE, payer }))

const LiveApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } })
const newBuyer = () => privateKeyToAccount(generatePrivateKey())

/** A live purchase signed by the official @x402/evm scheme for the Base mainnet requirement of the 402. */
const livePayment = (url: string, buyer = newBuyer()) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const signature = yield* signEvm(buyer, required, acceptedOf(required, BASE))
    return { buyer, required, signature }
  })

describe("live checkout: verify ok, settle ok", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("the official v2 client buys the repo's real archive; the sale is live and settled", () =>
      Effect.gen(function*() {
        const seller = yield* sell("live@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        expect(required.accepts).toEqual([expect.objectContaining({
          network: BASE,
          asset: BASE_USDC,
          amount: "750000",
          payTo: BASE_WALLET,
          extra: { name: "USD Coin", version: "2" }
        })])
        const buyer = newBuyer()
        verifyOk(buyer.address)
        settleOk(buyer.address)

        const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
        const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.live))
        const bytes = yield* expectGoods(paid)
        expect(bytes.toString("utf8")).toBe(WIDGET_ARCHIVE)
        expect(unb64(paid.headers.get("payment-response"))).toEqual({
          success: true,
          transaction: TX,
          network: BASE,
          payer: buyer.address,
          // The signed receipt (x402 offer-receipt; test/http/purchase-pinned.test.ts verifies it).
          extensions: { "offer-receipt": { info: { version: 1, receipt: { format: "jws", signature: paid.headers.get("x-receipt") } } } }
        })
        const receipt = receiptOf(paid)
        expect(receipt).toMatch(/^http:\/\/repomarket\.test\/downloads\/sale_/)

        // Verify, then settle, each with the buyer's payload as sent and the live requirement it matched.
        expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
        for (const { body } of calls) {
          expect(body.x402Version).toBe(2)
          expect(body.paymentPayload.payload.authorization).toMatchObject({ from: buyer.address, to: BASE_WALLET, value: "750000" })
          expect(body.paymentRequirements).toEqual({
            scheme: "exact",
            network: BASE,
            asset: BASE_USDC,
            amount: "750000",
            payTo: BASE_WALLET,
            maxTimeoutSeconds: 300,
            extra: { name: "USD Coin", version: "2" }
          })
        }
        expect(yield* onlySale(seller.accountId)).toMatchObject({
          livemode: true,
          status: "settled",
          network: BASE,
          asset: BASE_USDC,
          amount: 750_000n,
          payTo: BASE_WALLET,
          payer: buyer.address,
          commitSha: WIDGET_SHA,
          transaction: TX
        })

        // The receipt re-downloads the paid commit, even after the default branch moved on; no facilitator call.
        yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...PUBLIC_REPO, headSha: "fedcba9876543210fedcba9876543210fedcba98" }))
        const again = yield* expectGoods(yield* get(yield* local(receipt)))
        expect(again.toString("utf8")).toBe(WIDGET_ARCHIVE)
        expect(calls).toHaveLength(2)
      }))
  })
})

layer(LiveApp(), REAL_TIME)("live checkout: verify says invalid", (it) => {
  it.effect("402 with fresh requirements and the facilitator's reason; no settle, no sale", () =>
    Effect.gen(function*() {
      const seller = yield* sell("invalid@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { signature } = yield* livePayment(seller.live)
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: "insufficient_funds" }))
      const res = yield* payWith(seller.live, signature)
      expect(res.status).toBe(402)
      expect(unb64(res.headers.get("payment-required"))).toMatchObject({ error: "insufficient_funds", accepts: [{ network: BASE }] })
      expect(res.headers.get("payment-response")).toBeNull()
      expect(calls.map((c) => c.path)).toEqual(["/verify"])
      expect(yield* salesOf(seller.accountId)).toEqual([])
    }))
})

layer(LiveApp(), REAL_TIME)("live checkout: test money", (it) => {
  it.effect("a payment made on the test network is refused at the live checkout before any facilitator call", () =>
    Effect.gen(function*() {
      const seller = yield* sell("test-money@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const testPayment = yield* signEvm(newBuyer(), required, acceptedOf(required, "eip155:84532"))
      const res = yield* payWith(seller.live, testPayment)
      expect(res.status).toBe(402)
      expect(unb64(res.headers.get("payment-required"))).toMatchObject({ error: "network_mismatch", accepts: [{ network: BASE }] })
      expect(calls).toEqual([])
      expect(yield* salesOf(seller.accountId)).toEqual([])
    }))
})

layer(LiveApp(), REAL_TIME)("live checkout: verify fails", (it) => {
  it.effect("a facilitator that cannot verify (500) is a 503 problem, and nothing is recorded", () =>
    Effect.gen(function*() {
      const seller = yield* sell("verify-500@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { signature } = yield* livePayment(seller.live)
      yield* expectProblemResponse(yield* payWith(seller.live, signature), 503, "payments_unavailable")
      expect(calls.map((c) => c.path)).toEqual(["/verify"])
      expect(yield* salesOf(seller.accountId)).toEqual([])
    }))
})

layer(LiveApp(), REAL_TIME)("live checkout: settle fails", (it) => {
  it.effect("402 with PAYMENT-RESPONSE success:false and the reason in words, no bytes; the sale pending with the refusal noted (the authorization may still move until it expires); presenting it again settles nothing", () =>
    Effect.gen(function*() {
      const seller = yield* sell("settle-failed@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { buyer, signature } = yield* livePayment(seller.live)
      verifyOk(buyer.address)
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "insufficient_funds", transaction: "", network: BASE, payer: buyer.address }))
      const res = yield* payWith(seller.live, signature)
      const body = (yield* bytesOf(res)).toString("utf8")
      expect(res.status).toBe(402)
      expect(res.headers.get("content-type")).not.toBe("application/gzip")
      expect(body).not.toContain("export {}")
      expect(JSON.parse(body)).toMatchObject({ x402Version: 1, error: "insufficient_funds" })
      expect(body).toContain("does not hold enough USDC")
      expect(unb64(res.headers.get("payment-response"))).toEqual({
        success: false,
        transaction: "",
        network: BASE,
        payer: buyer.address,
        errorReason: "insufficient_funds"
      })
      expect(res.headers.get("link")).not.toMatch(/rel="receipt"/)
      expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
      expect(yield* onlySale(seller.accountId)).toMatchObject({ livemode: true, status: "pending", failureReason: "insufficient_funds", transaction: null })

      // The same payment again: the failure again, and the facilitator is not asked to settle it twice.
      const again = yield* payWith(seller.live, signature)
      expect(again.status).toBe(402)
      expect(unb64(again.headers.get("payment-response"))).toMatchObject({ success: false, errorReason: "insufficient_funds" })
      expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
      expect(yield* salesOf(seller.accountId)).toHaveLength(1)
    }))
})

layer(LiveApp(), REAL_TIME)("live checkout: settle times out", (it) => {
  it.effect("503 settlement_pending with Retry-After, never 'nothing was charged'; the sale stays pending (money may have moved), no bytes", () =>
    Effect.gen(function*() {
      const seller = yield* sell("settle-timeout@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { buyer, signature } = yield* livePayment(seller.live)
      verifyOk(buyer.address)
      answer("settle", async () => {
        await delay("infinite")
        return HttpResponse.json({ success: true, transaction: TX, network: BASE })
      })
      const started = Date.now()
      const res = yield* payWith(seller.live, signature)
      expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)
      const problem = yield* expectProblemResponse(res, 503, "settlement_pending")
      expect(problem.detail).not.toMatch(/nothing was charged/i)
      expect(problem.detail).toMatch(/may have been charged/)
      // X402_FACILITATOR_TIMEOUT_MS is 1 s here, against 30 s by default.
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
      const sale = yield* onlySale(seller.accountId)
      expect(sale).toMatchObject({ livemode: true, status: "pending", failureReason: null, transaction: null })
      // It can settle until the authorization's validBefore, and not after.
      expect(sale.settleBy?.getTime()).toBeGreaterThan(Date.now())
    }))
})

layer(PurchaseApp(), REAL_TIME)("no facilitator configured", (it) => {
  it.effect("the live checkout answers 503 payments_unavailable, paid or not, while the test twin still sells", () =>
    Effect.gen(function*() {
      const seller = yield* sell("no-facilitator@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const unpaid = yield* expectProblemResponse(yield* get(seller.live), 503, "payments_unavailable")
      expect(unpaid.detail).toMatch(/facilitator/)
      // A payment made for the live network changes nothing: there is no one to verify it.
      const { required } = yield* challenge(seller.test)
      const buyer = newBuyer()
      const forged = yield* signEvm(buyer, required, { ...acceptedOf(required, "eip155:84532"), network: BASE, asset: BASE_USDC })
      yield* expectProblemResponse(yield* get(seller.live, { "payment-signature": b64(forged) }), 503, "payments_unavailable")
      expect(calls).toEqual([])
      expect(yield* salesOf(seller.accountId)).toEqual([])

      const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
      const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.test))
      yield* expectGoods(paid)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ livemode: false, status: "settled" })
    }))
})

/*
 * The code host down or rate-limited during a purchase (CodeHostMemoryControl.setDown). The purchase checks
 * the code host after verify and before anything is recorded or settled, so the answer is 503
 * `host_unavailable` (with Retry-After when the host said how long), no sale and no settle; once the host is
 * back the same payment buys exactly once. And the host failing after settlement, while the goods stream:
 * the sale is settled once, the first answer is 503 goods_unavailable carrying the receipt link, and the buyer
 * gets the goods by presenting the payment again with its payment-identifier id, or by the receipt link.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET } from "../support/app.js"
import { acceptedOf, challenge, local, PurchaseApp, REAL_TIME, sell, signEvm, unb64 } from "../support/purchase.js"
import { type FakeFacilitator, startFakeFacilitator, transactionOf } from "./fakeFacilitator.js"
import {
  BASE_SEPOLIA,
  eventually,
  expectNoDuplicates,
  fetchWithin,
  ledgerOf,
  livePaymentWithId,
  newBuyer,
  presentWithin,
  problemOf
} from "./support.js"

const facilitator = await startFakeFacilitator()
afterAll(() => facilitator.close())

const nonceOf = (body: any) => String(body?.paymentPayload?.payload?.authorization?.nonce)
const callsFor = (fac: FakeFacilitator, path: "/verify" | "/settle", nonce: string) =>
  fac.calls.filter((c) => c.path === path && nonceOf(c.body) === nonce).length

/** One app per test: each lists the same repo. */
const App = () => PurchaseApp({ config: { X402_FACILITATOR_URL: facilitator.url, X402_FACILITATOR_TIMEOUT_MS: "5000" } })

const setDown = (state: "unavailable" | "rate_limited" | null) => Effect.flatMap(CodeHostMemoryControl, (c) => c.setDown(state))

/** A test-twin payment signed by the official client scheme, for the Base Sepolia requirement. */
const twinPayment = (url: string) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    return yield* signEvm(newBuyer(), required, acceptedOf(required, BASE_SEPOLIA))
  })

const cases = [
  { state: "unavailable", retryAfter: null },
  { state: "rate_limited", retryAfter: "60" }
] as const

describe("code host down during a purchase", () => {
  for (const { retryAfter, state } of cases) {
    layer(App(), REAL_TIME)((it) => {
      it.effect(`${state}: 503 host_unavailable${retryAfter === null ? "" : " with Retry-After"}, nothing recorded or settled; once back, the same payment buys once`, () =>
        Effect.gen(function*() {
          const seller = yield* sell(`host-${state}@example.com`, { price_usd: "0.75", wallet_base: BASE_WALLET })
          const p = yield* livePaymentWithId(seller.live)
          const twin = yield* twinPayment(seller.test)
          yield* setDown(state)

          const answer = yield* presentWithin(seller.live, p.signature)
          const problem = problemOf(answer, 503, "host_unavailable")
          expect(answer.headers.get("retry-after")).toBe(retryAfter)
          expect(problem["retry_after_seconds"] ?? null).toBe(retryAfter === null ? null : Number(retryAfter))
          // Verified, but nobody was charged.
          expect(callsFor(facilitator, "/verify", p.nonce)).toBe(1)
          expect(callsFor(facilitator, "/settle", p.nonce)).toBe(0)
          // The test twin cannot deliver either, and records nothing.
          problemOf(yield* presentWithin(seller.test, twin), 503, "host_unavailable")
          expect(yield* ledgerOf(seller.accountId)).toEqual([])

          yield* setDown(null)
          const bought = yield* presentWithin(seller.live, p.signature)
          expect(bought.status, bought.body.toString("utf8").slice(0, 300)).toBe(200)
          expect(unb64(bought.headers.get("payment-response"))).toMatchObject({ success: true, transaction: transactionOf({ paymentPayload: p.signature }) })
          expect((yield* presentWithin(seller.test, twin)).status).toBe(200)
          // Presented again with its payment-identifier id: the buyer's retry, the same goods; bare, nothing.
          const again = yield* presentWithin(seller.live, p.signature)
          expect(again.status).toBe(200)
          expect(again.body).toEqual(bought.body)
          expect((yield* presentWithin(seller.live, p.bare)).status).toBe(402)
          expect(callsFor(facilitator, "/settle", p.nonce)).toBe(1)

          const ledger = yield* ledgerOf(seller.accountId)
          expectNoDuplicates(ledger)
          expect(ledger.map((s) => [s.livemode, s.status])).toEqual([[false, "settled"], [true, "settled"]])
        }))
    })
  }
})

describe("code host fails after settlement, while the goods stream", () => {
  layer(App(), REAL_TIME)((it) => {
    it.effect("the sale is settled once; presenting the payment again, or the receipt link, delivers once the host is back", () =>
      Effect.gen(function*() {
        const seller = yield* sell("host-after-settle@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const p = yield* livePaymentWithId(seller.live)
        facilitator.settle = "hold"
        const first = yield* Effect.fork(presentWithin(seller.live, p.signature))
        yield* eventually("the settle to reach the facilitator", () => callsFor(facilitator, "/settle", p.nonce) === 1)
        yield* setDown("unavailable")
        facilitator.settle = "ok"
        facilitator.release()
        const firstAnswer = yield* Fiber.join(first)
        // The archive failed on its first pull, before any header was committed: a clear 503 that carries the
        // receipt link (body and Link) and the settlement receipt, never a closed socket or an empty 200.
        const owed = problemOf(firstAnswer, 503, "goods_unavailable")
        const firstReceipt = /^<([^>]+)>; rel="receipt"$/.exec(firstAnswer.headers.get("link") ?? "")?.[1]
        expect(firstReceipt).toBeDefined()
        expect(owed["receipt"]).toBe(firstReceipt)
        expect(firstAnswer.headers.get("retry-after")).not.toBeNull()
        expect(unb64(firstAnswer.headers.get("payment-response"))).toMatchObject({ success: true, transaction: transactionOf({ paymentPayload: p.signature }) })

        // The sale is settled, once.
        const [sale, ...others] = yield* ledgerOf(seller.accountId)
        expect(others).toEqual([])
        expect(sale).toMatchObject({ livemode: true, status: "settled", transaction: transactionOf({ paymentPayload: p.signature }) })

        yield* setDown(null)
        // Presented again with its payment-identifier id (a bare copy of the payment gets nothing).
        expect((yield* presentWithin(seller.live, p.bare)).status).toBe(402)
        const again = yield* presentWithin(seller.live, p.signature)
        expect(again.status, again.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(again.body.toString("utf8")).toContain("export {}")
        expect(callsFor(facilitator, "/settle", p.nonce)).toBe(1)
        const receipt = /^<([^>]+)>; rel="receipt"$/.exec(again.headers.get("link") ?? "")?.[1]
        expect(receipt).toBe(firstReceipt)
        const download = yield* fetchWithin(yield* local(receipt!))
        expect(download.status).toBe(200)
        expect(download.body).toEqual(again.body)
        expect(yield* ledgerOf(seller.accountId)).toHaveLength(1)
      }))
  })
})

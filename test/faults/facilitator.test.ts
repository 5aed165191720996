/*
 * The live facilitator down (connection refused) or slow (answers after X402_FACILITATOR_TIMEOUT_MS), and a
 * buyer who gives up while a settle is in flight. Expected: the live checkout answers 503
 * `payments_unavailable`; a verify failure records nothing, a settle failure records the sale `failed`;
 * never two sales or two settles for one payment; a buyer whose answer was lost recovers the goods with its
 * payment-identifier id (the bare payment presented again is refused: it is public on chain); the test twin (its own
 * simulated facilitator) keeps selling meanwhile.
 */
import { afterAll, afterEach, describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect, Fiber } from "effect"
import { BASE_WALLET } from "../support/app.js"
import { b64, challenge, newPaymentId, PurchaseApp, REAL_TIME, sell, unb64, withPaymentId } from "../support/purchase.js"
import { closedPort, type FakeFacilitator, startFakeFacilitator, transactionOf } from "./fakeFacilitator.js"
import { buyTwin, eventually, expectNoDuplicates, ledgerOf, livePayment, newBuyer, presentWithin, problemOf } from "./support.js"

const facilitator = await startFakeFacilitator()
const refusedPort = await closedPort()
afterEach(() => {
  facilitator.verify = "ok"
  facilitator.settle = "ok"
  facilitator.release()
})
afterAll(() => facilitator.close())

const nonceOf = (body: any) => String(body?.paymentPayload?.payload?.authorization?.nonce)
const callsFor = (fac: FakeFacilitator, path: "/verify" | "/settle", nonce: string) =>
  fac.calls.filter((c) => c.path === path && nonceOf(c.body) === nonce).length

/** The live facilitator's answers are bounded by this much here (30 s for settle by default). */
const TIMEOUT_MS = 500

describe("facilitator down: connection refused", () => {
  layer(PurchaseApp({ config: { X402_FACILITATOR_URL: `http://127.0.0.1:${refusedPort}`, X402_FACILITATOR_TIMEOUT_MS: "2000" } }), REAL_TIME)((it) => {
    it.effect("the live checkout answers 503 payments_unavailable at once, records nothing; the test twin keeps selling", () =>
      Effect.gen(function*() {
        const seller = yield* sell("fac-down@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        // A Base requirement needs nothing from the facilitator: the 402 is still offered.
        yield* challenge(seller.live)

        const { signature } = yield* livePayment(seller.live)
        const answer = yield* presentWithin(seller.live, signature)
        const problem = problemOf(answer, 503, "payments_unavailable")
        expect(problem.detail).toContain("could not verify")
        expect(answer.ms).toBeLessThan(5_000)
        expect(answer.headers.get("payment-response")).toBeNull()

        // The official client gets the same answer and no goods.
        const client = new x402Client().register("eip155:*", new ExactEvmScheme(newBuyer()))
        const viaClient = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.live))
        expect(viaClient.status).toBe(503)
        expect(viaClient.headers.get("content-type")).toMatch(/^application\/problem\+json/)
        yield* Effect.promise(() => viaClient.arrayBuffer())
        expect(yield* ledgerOf(seller.accountId)).toEqual([])

        yield* buyTwin(seller.test)
        const ledger = yield* ledgerOf(seller.accountId)
        expect(ledger.map((s) => [s.livemode, s.status])).toEqual([[false, "settled"]])
      }))
  })
})

/** An app on the fake facilitator; one per test, as each lists the same repo. */
const SlowApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: facilitator.url, X402_FACILITATOR_TIMEOUT_MS: String(TIMEOUT_MS) } })

describe("facilitator slow: answers after the timeout", () => {
  layer(SlowApp(), REAL_TIME)((it) => {
    it.effect("a slow verify: 503 within about the timeout, no sale; the twin sells meanwhile; once it is fast again the same payment buys once, and again it is refused", () =>
      Effect.gen(function*() {
        const seller = yield* sell("fac-slow-verify@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const p = yield* livePayment(seller.live)
        facilitator.verify = { delayMs: 4_000 }

        const pending = yield* Effect.fork(presentWithin(seller.live, p.signature))
        // While the live verify hangs, the test twin (its own facilitator) sells.
        const twin = yield* buyTwin(seller.test)
        const answer = yield* Fiber.join(pending)
        expect(problemOf(answer, 503, "payments_unavailable").detail).toContain("could not verify")
        expect(answer.ms).toBeLessThan(TIMEOUT_MS + 3_000)
        expect(callsFor(facilitator, "/verify", p.nonce)).toBe(1)
        expect(callsFor(facilitator, "/settle", p.nonce)).toBe(0)
        expect((yield* ledgerOf(seller.accountId)).map((s) => [s.livemode, s.status, s.transaction])).toEqual([[false, "settled", twin.transaction]])

        facilitator.verify = "ok"
        const bought = yield* presentWithin(seller.live, p.signature)
        expect(bought.status, bought.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(unb64(bought.headers.get("payment-response"))).toMatchObject({ success: true, transaction: transactionOf({ paymentPayload: p.signature }) })
        // Presented again it is no key to the goods (every part of it is public on chain), and settles nothing.
        const again = yield* presentWithin(seller.live, p.signature)
        expect(again.status).toBe(402)
        expect(unb64(again.headers.get("payment-required")).error).toBe("payment_already_used")
        expect(again.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        expect(callsFor(facilitator, "/settle", p.nonce)).toBe(1)

        const ledger = yield* ledgerOf(seller.accountId)
        expectNoDuplicates(ledger)
        expect(ledger.map((s) => [s.livemode, s.status])).toEqual([[true, "settled"], [false, "settled"]])
      }))
  })

  layer(SlowApp(), REAL_TIME)((it) => {
    it.effect("a slow settle: 503 settlement_pending, the sale stays pending (never 'failed', no goods); presented again, no second settle", () =>
      Effect.gen(function*() {
        const seller = yield* sell("fac-slow-settle@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const p = yield* livePayment(seller.live)
        facilitator.settle = { delayMs: 3_000 }

        const answer = yield* presentWithin(seller.live, p.signature)
        expect(problemOf(answer, 503, "settlement_pending").detail).not.toMatch(/nothing was charged/i)
        expect(answer.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)
        expect(answer.headers.get("content-type")).not.toBe("application/gzip")
        expect(answer.ms).toBeLessThan(TIMEOUT_MS + 3_000)
        const [sale, ...others] = yield* ledgerOf(seller.accountId)
        expect(others).toEqual([])
        expect(sale).toMatchObject({ livemode: true, status: "pending", failureReason: null, transaction: null, settledAt: null })

        // Presented again: still not known (no chain reader here), so 503 again; never a second settle.
        const again = yield* presentWithin(seller.live, p.signature)
        problemOf(again, 503, "settlement_pending")
        expect(callsFor(facilitator, "/settle", p.nonce)).toBe(1)
        const ledger = yield* ledgerOf(seller.accountId)
        expect(ledger.map((s) => [s.id, s.status])).toEqual([[sale!.id, "pending"]])
      }))
  })
})

describe("the buyer gives up while the settle is in flight", () => {
  layer(SlowApp(), REAL_TIME)((it) => {
    it.effect("the buyer disconnects while the settle is in flight: the sale still settles once; the payment presented again is refused, and with its payment-identifier id it gets the goods", () =>
      Effect.gen(function*() {
        const seller = yield* sell("fac-abort@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const p = yield* livePayment(seller.live)
        const id = newPaymentId()
        const withId = withPaymentId(p.signature, id)
        facilitator.settle = "hold"

        const abort = new AbortController()
        const gaveUp = Effect.promise(() =>
          fetch(seller.live, { headers: { "payment-signature": b64(withId) }, signal: abort.signal }).then(
            (res) => `answered ${res.status}`,
            (e: unknown) => `gave up: ${String(e)}`
          )
        )
        const request = yield* Effect.fork(gaveUp)
        yield* eventually("the settle to reach the facilitator", () => callsFor(facilitator, "/settle", p.nonce) === 1)
        abort.abort()
        expect(yield* Fiber.join(request)).toMatch(/^gave up/)
        // The facilitator settles after the buyer left: the money moved, so the sale must be recorded settled.
        yield* Effect.sleep("100 millis")
        facilitator.release()
        let status = ""
        for (let i = 0; i < 100 && status !== "settled"; i++) {
          yield* Effect.sleep("50 millis")
          status = (yield* ledgerOf(seller.accountId))[0]?.status ?? "none"
        }
        expect(status, "the sale after the settle came back").toBe("settled")

        // The bare payment (public on chain once settled) is no key to the goods.
        const bare = yield* presentWithin(seller.live, p.signature)
        expect(bare.status).toBe(402)
        expect(unb64(bare.headers.get("payment-required")).error).toBe("payment_already_used")
        // The buyer's retry with its id gets the goods of the settled sale, without a second settle.
        const again = yield* presentWithin(seller.live, withId)
        expect(again.status, again.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(again.headers.get("link")).toMatch(/rel="receipt"/)
        expect(unb64(again.headers.get("payment-response"))).toMatchObject({ success: true, transaction: transactionOf({ paymentPayload: p.signature }) })
        expect(callsFor(facilitator, "/settle", p.nonce)).toBe(1)
        // The id is the buyer's secret: the facilitator never saw it.
        expect(JSON.stringify(facilitator.calls)).not.toContain(id)
        const ledger = yield* ledgerOf(seller.accountId)
        expect(ledger.map((s) => [s.status, s.transaction])).toEqual([["settled", transactionOf({ paymentPayload: p.signature })]])
      }))
  })
})

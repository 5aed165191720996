import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { signedAt } from "./receiver.js"
import { buyTest, deliverDue, eventById, onlyEvent, receiver, salesPage, sellerWithHook, WebhookApp } from "./support.js"

describe("a receiver answering 500", () => {
  layer(WebhookApp())((it) => {
    it.scoped("is retried with growing back-off for about 30 s from the first attempt, then the event is failed", () =>
      Effect.gen(function*() {
        const hook = yield* receiver(() => 500)
        const seller = yield* sellerWithHook("retried@example.com", hook, 2)
        const first = yield* buyTest(seller.test)
        const second = yield* buyTest(seller.test)
        const page = yield* salesPage(seller.key)
        // Newest first.
        expect(page.sales.map((s) => s.payer)).toStrictEqual([second.payer, first.payer])
        const events = yield* Effect.forEach(page.sales, (s) => onlyEvent(s.id))
        const start = yield* Clock.currentTimeMillis

        // One pass a second, on the TestClock, for a minute: no real waiting.
        for (let tick = 0; tick <= 60; tick++) {
          yield* deliverDue
          yield* TestClock.adjust("1 second")
        }

        for (const event of events) {
          const mine = hook.arrivals.filter((a) => a.eventId === event.id)
          const times = mine.map((a) => signedAt(a.headers["x-service-signature"]))
          // 1, 2, 4, 8, 8 s apart, and the last try at the end of the 30 s window.
          expect(times.map((t) => t - times[0]!)).toStrictEqual([0, 1, 3, 7, 15, 23, 30])
          expect(times[0]).toBe(Math.floor(start / 1000))
          expect(mine.every((a) => a.answered === 500 && a.method === "POST")).toBe(true)
          const done = yield* eventById(event.id)
          expect(done).toMatchObject({ status: "failed", attempts: 7, lastError: "HTTP 500" })
          expect(done.firstAttemptAt?.getTime()).toBe(start)
        }

        // Failed is final: much later, nothing more is sent.
        yield* TestClock.adjust("10 minutes")
        expect(yield* deliverDue).toBe(0)
        expect(hook.arrivals).toHaveLength(14)

        // The ledger of record still shows both sales, with what their webhooks did, and the right totals.
        const after = yield* salesPage(seller.key)
        expect(after.sales).toHaveLength(2)
        for (const sale of after.sales) {
          expect(sale).toMatchObject({
            repo: "Octo-Org/Hook-2",
            amount_usd: "0.50",
            amount: "500000",
            network: "eip155:84532",
            livemode: false,
            webhook: { status: "failed", attempts: 7, last_error: "HTTP 500" }
          })
        }
        expect(after.totals).toStrictEqual([{ chain: "base", livemode: false, amount_usd: "1.00", amount: "1000000", count: 2 }])
        expect((yield* salesPage(seller.key, "?livemode=false")).sales).toHaveLength(2)
        expect((yield* salesPage(seller.key, "?livemode=true")).sales).toHaveLength(0)
        const paged = yield* salesPage(seller.key, "?limit=1")
        expect(paged.sales.map((s) => s.payer)).toStrictEqual([second.payer])
        const rest = yield* salesPage(seller.key, `?limit=1&cursor=${paged.next_cursor}`)
        expect(rest.sales.map((s) => s.payer)).toStrictEqual([first.payer])
        expect(rest.next_cursor).toBeNull()
      }))
  })
})

describe("a receiver slower than 5 s", () => {
  layer(WebhookApp())((it) => {
    // The sender's timeout is a real AbortSignal.timeout(5000) (ATTEMPT_TIMEOUT_MS, not injectable through
    // the port from the use case): this test waits for one real attempt of about 5 s.
    it.scoped("times out at 5 s; the attempt is recorded as failed with a timeout and retried later", () =>
      Effect.gen(function*() {
        const hook = yield* receiver((a) => (a.n === 1 ? "hang" : 200))
        const seller = yield* sellerWithHook("slow@example.com", hook, 3)
        yield* buyTest(seller.test)
        const [sale] = (yield* salesPage(seller.key)).sales

        const began = Date.now()
        expect(yield* deliverDue).toBe(1)
        const took = Date.now() - began
        expect(took).toBeGreaterThanOrEqual(4_900)
        expect(took).toBeLessThan(7_000)
        const held = hook.arrivals[0]!
        expect(held.answered).toBeNull()
        // The sender hung up on the receiver at 5 s.
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        expect(held.abandonedAt! - held.arrivedAt).toBeGreaterThanOrEqual(4_500)
        expect(held.abandonedAt! - held.arrivedAt).toBeLessThan(6_000)

        const event = yield* onlyEvent(sale!.id)
        expect(event).toMatchObject({ status: "pending", attempts: 1, lastError: "timeout: no answer within 5000 ms" })
        expect(event.nextAttemptAt.getTime() - event.firstAttemptAt!.getTime()).toBe(1_000)
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({
          status: "pending",
          attempts: 1,
          last_error: "timeout: no answer within 5000 ms"
        })

        // Not due before its back-off; due after it, and then delivered.
        expect(yield* deliverDue).toBe(0)
        yield* TestClock.adjust("1 second")
        expect(yield* deliverDue).toBe(1)
        expect(hook.arrivals.map((a) => [a.eventId, a.answered])).toStrictEqual([[event.id, null], [event.id, 200]])
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({ status: "delivered", attempts: 2, last_error: null })
      }), 20_000)
  })
})

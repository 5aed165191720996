import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { call } from "../support/app.js"
import { buyTest, deliverDue, onlyEvent, receiver, salesPage, sellerWithHook, setWebhook, WebhookApp } from "./support.js"

/**
 * Issue 12, finding 13(c): the webhook is removed (`webhook_url: ""`) while a delivery attempt is in flight.
 * The attempt's outcome, arriving after the removal cancelled the event, must not bring the event back to
 * pending (or record anything over the cancellation), and no later attempt may go anywhere: not to the
 * removed URL, and not to a URL set afterwards.
 */
describe("removing the webhook while an attempt is in flight", () => {
  layer(WebhookApp())((it) => {
    it.scoped("the late outcome does not resurrect the cancelled event; nothing more is sent, to the old URL or a new one", () =>
      Effect.gen(function*() {
        // The receiver takes 1.5 s to answer 500: the attempt is still in flight while the webhook is removed.
        const hook = yield* receiver(() => ({ status: 500, delayMs: 1500 }))
        const seller = yield* sellerWithHook("inflight@example.com", hook, 3)
        yield* buyTest(seller.test)
        const [sale] = (yield* salesPage(seller.key)).sales

        const pass = yield* Effect.fork(deliverDue)
        yield* Effect.promise(() => hook.waitFor(1, 5000))
        const removed = yield* call("PATCH", "/my/account", { token: seller.key, body: { webhook_url: "" } })
        expect(removed.status, removed.text).toBe(200)
        expect(yield* Fiber.join(pass)).toBe(1)

        const event = yield* onlyEvent(sale!.id)
        expect(event.status).toBe("cancelled")
        expect((yield* salesPage(seller.key)).sales[0]!.webhook.status).toBe("cancelled")

        // However long we wait, and even once another webhook is set, the cancelled event is not sent again.
        yield* TestClock.adjust("1 minute")
        expect(yield* deliverDue).toBe(0)
        const other = yield* receiver()
        yield* setWebhook(seller.key, other.url)
        yield* TestClock.adjust("1 minute")
        expect(yield* deliverDue).toBe(0)
        expect(hook.arrivals).toHaveLength(1)
        expect(other.arrivals).toHaveLength(0)
        expect((yield* onlyEvent(sale!.id)).status).toBe("cancelled")
      }))
  })
})

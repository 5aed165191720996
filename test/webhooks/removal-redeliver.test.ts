import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { verifyWebhookSignature } from "../../entry/webhooks.js"
import { BASE_WALLET, call } from "../support/app.js"
import { expectProblem } from "../support/flows.js"
import { sell } from "../support/purchase.js"
import { signedAt } from "./receiver.js"
import { buyTest, deliverDue, eventsOf, onlyEvent, receiver, salesPage, sellerWithHook, setWebhook, WebhookApp } from "./support.js"

describe("removing the webhook (webhook_url: \"\")", () => {
  layer(WebhookApp())((it) => {
    it.scoped("cancels pending events, keeps delivered ones, and new sales queue nothing", () =>
      Effect.gen(function*() {
        // The first delivery succeeds, every later one fails (so it stays pending, waiting for a retry).
        const hook = yield* receiver((a) => (a.n === 1 ? 200 : 500))
        const seller = yield* sellerWithHook("removed@example.com", hook, 4)
        yield* buyTest(seller.test)
        yield* deliverDue
        yield* buyTest(seller.test)
        yield* deliverDue
        yield* buyTest(seller.test)
        const before = (yield* salesPage(seller.key)).sales.map((s) => s.webhook)
        expect(before).toStrictEqual([
          { status: "pending", attempts: 0, last_error: null },
          { status: "pending", attempts: 1, last_error: "HTTP 500" },
          { status: "delivered", attempts: 1, last_error: null }
        ])

        const removed = yield* call("PATCH", "/my/account", { token: seller.key, body: { webhook_url: "" } })
        expect(removed.status, removed.text).toBe(200)
        expect(removed.json.webhook_url).toBeNull()
        expect((yield* salesPage(seller.key)).sales.map((s) => s.webhook.status)).toStrictEqual(["cancelled", "cancelled", "delivered"])

        // A sale after removal queues no event at all.
        yield* buyTest(seller.test)
        const after = yield* salesPage(seller.key)
        expect(after.sales).toHaveLength(4)
        expect(after.sales[0]!.webhook).toStrictEqual({ status: "none", attempts: 0, last_error: null })
        expect(yield* eventsOf(after.sales[0]!.id)).toStrictEqual([])

        // Nothing more is sent, however long we wait.
        yield* TestClock.adjust("1 minute")
        expect(yield* deliverDue).toBe(0)
        expect(hook.arrivals).toHaveLength(2)
      }))
  })
})

describe("POST /my/sales/<id>/redeliver", () => {
  layer(WebhookApp())((it) => {
    it.scoped("answers 202; the next pass sends the same event again with a fresh timestamp", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("again@example.com", hook, 5)
        yield* buyTest(seller.test)
        yield* deliverDue
        const [sale] = (yield* salesPage(seller.key)).sales
        const event = yield* onlyEvent(sale!.id)
        expect(event.status).toBe("delivered")

        yield* TestClock.adjust("90 seconds")
        const asked = yield* call("POST", `/my/sales/${sale!.id}/redeliver`, { token: seller.key })
        expect(asked.status, asked.text).toBe(202)
        expect(asked.json).toStrictEqual({ event_id: event.id, status: "pending" })
        // Sent by the worker, not on the request.
        expect(hook.arrivals).toHaveLength(1)
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({ status: "pending", attempts: 0, last_error: null })

        expect(yield* deliverDue).toBe(1)
        const [first, again] = hook.arrivals
        expect(again!.eventId).toBe(event.id)
        expect(again!.rawBody).toBe(first!.rawBody)
        const [t1, t2] = [first!, again!].map((a) => signedAt(a.headers["x-service-signature"]))
        expect(t2! - t1!).toBe(90)
        expect(verifyWebhookSignature(seller.secret, again!.headers["x-service-signature"] as string, again!.rawBody)).toBe(true)
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({ status: "delivered", attempts: 1, last_error: null })
        expect(yield* eventsOf(sale!.id)).toHaveLength(1)
      }))

    it.scoped("unknown sales and other accounts' sales are 404; a sale settled without a webhook is backfilled", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const owner = yield* sellerWithHook("owner@example.com", hook, 6)
        yield* buyTest(owner.test)
        const [owned] = (yield* salesPage(owner.key)).sales

        const stranger = yield* sell("stranger@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET, host_url: "https://github.com/octo-org/hook-7" })
        for (const path of [`/my/sales/${owned!.id}/redeliver`, "/my/sales/sale_doesnotexist000000000000/redeliver"]) {
          expectProblem(yield* call("POST", path, { token: stranger.key }), 404, "not_found")
        }
        expect((yield* call("POST", `/my/sales/${owned!.id}/redeliver`)).status).toBe(401)
        expect(yield* eventsOf(owned!.id)).toHaveLength(1)

        // The stranger sold without a webhook: no event; redeliver needs one set first, then backfills it.
        yield* buyTest(stranger.test)
        const [unsent] = (yield* salesPage(stranger.key)).sales
        expect(unsent!.webhook.status).toBe("none")
        expectProblem(yield* call("POST", `/my/sales/${unsent!.id}/redeliver`, { token: stranger.key }), 404, "not_found")
        const secret = yield* setWebhook(stranger.key, hook.url)
        const asked = yield* call("POST", `/my/sales/${unsent!.id}/redeliver`, { token: stranger.key })
        expect(asked.status, asked.text).toBe(202)

        expect(yield* deliverDue).toBe(2)
        const backfilled = hook.arrivals.find((a) => a.eventId === asked.json.event_id)!
        expect(JSON.parse(backfilled.rawBody).data.sale_id).toBe(unsent!.id)
        expect(verifyWebhookSignature(secret, backfilled.headers["x-service-signature"] as string, backfilled.rawBody)).toBe(true)
        expect((yield* salesPage(stranger.key)).sales[0]!.webhook.status).toBe("delivered")
      }))
  })
})

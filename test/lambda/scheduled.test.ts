import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { verifyWebhookSignature } from "../../entry/webhooks.js"
import { REAL_TIME } from "../support/purchase.js"
import {
  httpEvent,
  invoke,
  LambdaTest,
  paymentHeadersFor,
  SCHEDULED_EVENT,
  sellThroughLambda,
  TestLambda,
  webhookReceiver
} from "./support.js"

/** A seller with a webhook on `url` and one paid test-twin sale; returns the webhook secret and session. */
const saleWithWebhook = (email: string, url: string) =>
  Effect.gen(function*() {
    const { session, testCheckout } = yield* sellThroughLambda(email)
    const set = yield* invoke(httpEvent("PATCH", "/my/account", { token: session, json: { webhook_url: url } }))
    expect(set.statusCode, set.body).toBe(200)
    const challenge = yield* invoke(httpEvent("GET", testCheckout))
    const paid = yield* invoke(httpEvent("GET", testCheckout, { headers: yield* paymentHeadersFor(challenge) }))
    expect(paid.statusCode).toBe(200)
    return { session, secret: set.json.webhook_secret as string }
  })

const webhookOfOnlySale = (session: string) =>
  Effect.map(invoke(httpEvent("GET", "/my/sales", { token: session, query: "livemode=false" })), (sales) => {
    expect(sales.statusCode, sales.body).toBe(200)
    expect(sales.json.sales).toHaveLength(1)
    return sales.json.sales[0].webhook as { status: string; attempts: number }
  })

const runSchedule = (context?: { getRemainingTimeInMillis: () => number }) =>
  Effect.flatMap(TestLambda, (l) => Effect.promise(() => l.scheduled(SCHEDULED_EVENT, context)))

describe("scheduled handler: webhook delivery from the outbox (EventBridge, rate(1 minute))", () => {
  layer(LambdaTest({ allowPrivateWebhooks: true, delivery: { quietMs: 2_500, pollMs: 100 } }), REAL_TIME)((it) => {
    it.scoped("delivers a queued sale.settled event to a loopback receiver, signed; nothing is sent before the run", () =>
      Effect.gen(function*() {
        const receiver = yield* webhookReceiver()
        const { secret, session } = yield* saleWithWebhook("hooks@example.com", receiver.url)

        // The Lambda HTTP host runs no delivery worker: the event waits in the outbox for the schedule.
        yield* Effect.sleep("400 millis")
        expect(receiver.received).toHaveLength(0)
        expect(yield* webhookOfOnlySale(session)).toMatchObject({ status: "pending", attempts: 0 })

        const summary = yield* runSchedule()
        expect(summary).toMatchObject({ attempted: 1, stoppedBecause: "idle" })
        expect(receiver.received).toHaveLength(1)
        const [delivery] = receiver.received
        expect(verifyWebhookSignature(secret, delivery!.headers["x-service-signature"] as string, delivery!.rawBody)).toBe(true)
        expect(JSON.parse(delivery!.rawBody)).toMatchObject({ type: "sale.settled", livemode: false, data: { repo: "Octo-Org/Widget" } })
        expect(yield* webhookOfOnlySale(session)).toMatchObject({ status: "delivered", attempts: 1 })

        // The next run finds nothing due: one pass, then it stops at once.
        const idle = yield* runSchedule()
        expect(idle).toMatchObject({ passes: 1, attempted: 0, stoppedBecause: "idle" })
        expect(idle.elapsedMs).toBeLessThan(1_000)
        expect(receiver.received).toHaveLength(1)
      }))
  })
})

describe("scheduled handler: a failed attempt is retried in the same run", () => {
  layer(LambdaTest({ allowPrivateWebhooks: true, delivery: { quietMs: 2_500, pollMs: 100 } }), REAL_TIME)((it) => {
    it.scoped("the receiver answers 500 once: the retry 1 s later is made before the run stops", () =>
      Effect.gen(function*() {
        const receiver = yield* webhookReceiver([500])
        const { session } = yield* saleWithWebhook("flaky@example.com", receiver.url)
        const summary = yield* runSchedule()
        expect(summary).toMatchObject({ attempted: 2, stoppedBecause: "idle" })
        expect(summary.passes).toBeGreaterThan(2)
        expect(receiver.received).toHaveLength(2)
        expect(yield* webhookOfOnlySale(session)).toMatchObject({ status: "delivered", attempts: 2 })
      }))
  })
})

describe("scheduled handler: the invocation's remaining time", () => {
  layer(LambdaTest({ allowPrivateWebhooks: true }), REAL_TIME)((it) => {
    it.scoped("with little time left it makes one pass and stops on the time budget, leaving retries queued", () =>
      Effect.gen(function*() {
        const receiver = yield* webhookReceiver([500])
        const { session } = yield* saleWithWebhook("hurried@example.com", receiver.url)
        const summary = yield* runSchedule({ getRemainingTimeInMillis: () => 3_000 })
        expect(summary).toMatchObject({ passes: 1, attempted: 1, stoppedBecause: "time_budget" })
        expect(yield* webhookOfOnlySale(session)).toMatchObject({ status: "pending", attempts: 1 })
      }))
  })
})

/*
 * Shared by test/webhooks/*.test.ts: the HTTP app with loopback webhooks allowed, a real receiver as a scoped
 * resource, a seller whose webhook points at it, a test-twin sale paid with the official x402 v2 client, and
 * delivery driven by hand through the `Webhooks` use case (the delivery worker is not part of TestApp).
 */
import { expect } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Clock, Effect, Layer, Option, TestClock } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { SaleId } from "../../domain/Ids.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import type { WebhookEvent } from "../../domain/WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, call, DEFAULT_REPOS, TestApp, type TestAppOptions } from "../support/app.js"
import { sell } from "../support/purchase.js"
import { type Answer, type Arrival, type Receiver, startReceiver } from "./receiver.js"

export const ALLOW_PRIVATE = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } as const

/** More repos to sell, so each test in one app lists its own: `Octo-Org/Hook-0` … `Octo-Org/Hook-9`. */
export const HOOK_REPOS: ReadonlyArray<FakeRepo> = Array.from({ length: 10 }, (_, i) => ({
  owner: "Octo-Org",
  name: `Hook-${i}`,
  files: { "README.md": `# Hook ${i}` }
}))

/**
 * TestApp (memory storage, TestClock) whose webhook sender may reach loopback receivers, plus the `Webhooks`
 * use case over the same ports, so tests drive delivery passes as the host's worker would.
 */
export const WebhookApp = (options: TestAppOptions = {}) => DefaultWebhookApp({ ...options, config: { ...ALLOW_PRIVATE, ...options.config } })

/** The same with the operator defaults: private, loopback and link-local targets refused, `https` only. */
export const DefaultWebhookApp = (options: TestAppOptions = {}) =>
  Layer.provideMerge(Webhooks.Default, TestApp({ repos: [...DEFAULT_REPOS, ...HOOK_REPOS], ...options }))

/** A loopback receiver, closed with the scope. */
export const receiver = (answer?: (arrival: Arrival) => Answer) =>
  Effect.acquireRelease(Effect.promise(() => startReceiver(answer)), (r) => Effect.promise(() => r.close()))

/**
 * The official x402 client stamps its authorization from `Date.now()`: bring the TestClock up to real time
 * (never backwards) before a purchase. Returns the clock's time.
 */
export const clockAtRealTime = Effect.gen(function*() {
  const t = yield* Clock.currentTimeMillis
  if (t < Date.now()) yield* TestClock.setTime(Date.now())
  return yield* Clock.currentTimeMillis
})

/** Sets the account's webhook through `PATCH /my/account`; returns the secret from that response. */
export const setWebhook = (key: string, url: string) =>
  Effect.map(call("PATCH", "/my/account", { token: key, body: { webhook_url: url } }), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json.webhook_url).toBe(url)
    expect(reply.json.webhook_secret).toMatch(/^whsec_/)
    return reply.json.webhook_secret as string
  })

/** A seller listing a repo (default the widget; a number: `Hook-<n>`) at $0.50 on Base, with the webhook at `hook`. */
export const sellerWithHook = (email: string, hook: Receiver | string, repo?: number) =>
  Effect.gen(function*() {
    const hostUrl = repo === undefined ? {} : { host_url: `https://github.com/octo-org/hook-${repo}` }
    const seller = yield* sell(email, { price_usd: "0.50", wallet_base: BASE_WALLET, ...hostUrl })
    const secret = yield* setWebhook(seller.key, typeof hook === "string" ? hook : hook.url)
    return { ...seller, secret }
  })

/** Pays the test twin with the official v2 client (@x402/fetch + @x402/evm); returns the payer and receipt. */
export const buyTest = (checkoutUrl: string) =>
  Effect.gen(function*() {
    yield* clockAtRealTime
    const buyer = privateKeyToAccount(generatePrivateKey())
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))
    const paid = yield* Effect.promise(() => pay(checkoutUrl))
    yield* Effect.promise(() => paid.arrayBuffer())
    expect(paid.status).toBe(200)
    const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-response")!, "base64").toString("utf8"))
    return { payer: buyer.address, transaction: receipt.transaction as string }
  })

/** One delivery pass; how many events it attempted. */
export const deliverDue = Effect.flatMap(Webhooks, (w) => w.deliverDue())

/** Passes until one finds nothing due. */
export const drain = Effect.gen(function*() {
  let total = 0
  for (let n = yield* deliverDue; n > 0; n = yield* deliverDue) total += n
  return total
})

/** `GET /my/sales` that must succeed. */
export const salesPage = (key: string, query = "") =>
  Effect.map(call("GET", `/my/sales${query}`, { token: key }), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.json as {
      sales: Array<{ id: string; livemode: boolean; webhook: { status: string; attempts: number; last_error: string | null }; [k: string]: unknown }>
      next_cursor: string | null
      totals: Array<{ chain: string; livemode: boolean; amount_usd: string; amount: string; count: number }>
    }
  })

/** The events queued for a sale, oldest first. */
export const eventsOf = (saleId: string) =>
  Effect.flatMap(Outbox, (o) => o.findBySale(saleId as SaleId)) as Effect.Effect<ReadonlyArray<WebhookEvent>, never, Outbox>

/** The one event queued for a sale. */
export const onlyEvent = (saleId: string) =>
  Effect.map(eventsOf(saleId), (events) => {
    expect(events).toHaveLength(1)
    return events[0]!
  })

export const eventById = (id: string) =>
  Effect.map(Effect.flatMap(Outbox, (o) => o.findById(id as WebhookEvent["id"])), Option.getOrThrow)

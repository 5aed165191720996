import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Outbox } from "../../ports/Outbox.js"
import { describePostgres, type TestDatabase } from "../support/postgres.js"
import type { Receiver } from "./receiver.js"
import { currentDatabase, DeliveryNode, freshSecretKeys, nodeConfig, poolOn, seedAccount, seedEvents } from "./node.js"
import { buyTest, drain, receiver, sellerWithHook, WebhookApp } from "./support.js"

/** Every event arrived exactly once, and each was answered 2xx. */
const expectExactlyOnce = (hook: Receiver, ids: ReadonlyArray<string>) => {
  const counts = hook.countsByEvent()
  const duplicates = [...counts].filter(([, n]) => n > 1)
  expect({ duplicates, distinct: counts.size, total: hook.arrivals.length }).toStrictEqual({ duplicates: [], distinct: ids.length, total: ids.length })
  expect([...counts.keys()].sort()).toStrictEqual([...ids].sort())
  expect(hook.arrivals.every((a) => a.answered === 200)).toBe(true)
}

describe("several delivery passes at once (memory outbox)", () => {
  layer(WebhookApp())((it) => {
    it.scoped("two concurrent passes over a burst deliver every event exactly once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver(() => ({ status: 200, delayMs: 5 }))
        const seller = yield* sellerWithHook("burst@example.com", hook, 9)
        for (let i = 0; i < 3; i++) yield* buyTest(seller.test)
        const account = Option.getOrThrow(yield* Effect.flatMap(AccountStore, (s) => s.findByEmail("burst@example.com")))
        const burst = yield* seedEvents(account.id, 200, new Date(yield* Clock.currentTimeMillis))

        const [a, b] = yield* Effect.all([drain, drain], { concurrency: 2 })
        // Both passes took part, and between them attempted each event once.
        expect(a).toBeGreaterThan(0)
        expect(b).toBeGreaterThan(0)
        expect(a + b).toBe(203)
        expect(hook.arrivals).toHaveLength(203)
        const counts = hook.countsByEvent()
        expect([...counts.values()].every((n) => n === 1)).toBe(true)
        for (const e of burst) expect(counts.get(e.id)).toBe(1)
      }))
  })
})

/** Builds one app instance's delivery side on the given SqlClient layer. */
const instance = (keys: string, db: Layer.Layer<any, any>) =>
  Layer.build(DeliveryNode.pipe(Layer.provide(nodeConfig(keys)), Layer.provide(db)))

/**
 * Runs one delivery loop per instance, as the host's worker does (a pass; a short idle wait when it found
 * nothing), until `done` or the deadline. Returns how many events each loop attempted.
 */
const runWorkers = (
  nodes: ReadonlyArray<Context.Context<Webhooks>>,
  done: () => boolean,
  deadlineMs: number,
  /** When given, every loop but the first starts only once this holds. */
  startOthers?: () => boolean
) =>
  Effect.forEach(nodes, (node, i) =>
    Effect.gen(function*() {
      const webhooks = Context.get(node, Webhooks)
      const stopAt = Date.now() + deadlineMs
      while (i > 0 && startOthers !== undefined && !startOthers() && Date.now() < stopAt) yield* Effect.sleep("10 millis")
      let attempted = 0
      while (!done() && Date.now() < stopAt) {
        const n = yield* webhooks.deliverDue()
        attempted += n
        if (n === 0) yield* Effect.sleep("20 millis")
      }
      return attempted
    }), { concurrency: "unbounded" })

/** Two instances, each with its own pool, on one fresh database; the first seeds an account at `hook`. */
const twoInstances = (database: TestDatabase, hook: Receiver) =>
  Effect.gen(function*() {
    const keys = freshSecretKeys()
    const db = yield* Layer.build(database)
    const name = yield* currentDatabase.pipe(Effect.provide(db))
    const one = yield* instance(keys, Layer.succeedContext(db))
    const two = yield* instance(keys, poolOn(name))
    const account = yield* seedAccount(hook.url, "whsec_two_instances").pipe(Effect.provide(one))
    return { one, two, account }
  })

await describePostgres("several app instances on one PostgreSQL database", (database) => {
  it.live("a burst of 300 events: every event delivered exactly once, by both instances", () =>
    Effect.gen(function*() {
      const hook = yield* receiver()
      const { account, one, two } = yield* twoInstances(database, hook)
      const events = yield* seedEvents(account.id, 300, new Date()).pipe(Effect.provide(one))
      const [a = 0, b = 0] = yield* runWorkers([one, two], () => hook.arrivals.length >= 300, 30_000)
      // Let any late duplicate show up before counting.
      yield* Effect.sleep("300 millis")
      expectExactlyOnce(hook, events.map((e) => e.id))
      expect(a).toBeGreaterThan(0)
      expect(b).toBeGreaterThan(0)
      expect(a + b).toBe(300)
      const stored = yield* Effect.forEach(events, (e) => Effect.flatMap(Outbox, (o) => o.findById(e.id)), { concurrency: 8 }).pipe(Effect.provide(two))
      expect(stored.every((e) => Option.getOrThrow(e).status === "delivered")).toBe(true)
    }).pipe(Effect.scoped), 60_000)

  // A receiver that takes 3.5 s per request (inside the 5 s attempt timeout): a pass must not hold claimed
  // events so long that their lease runs out before they are sent, or the other instance sends them too. The
  // second instance starts once the first has claimed the whole burst and is sending it.
  it.live("a slow receiver: claimed events are sent before their lease ends, so no event is sent twice", () =>
    Effect.gen(function*() {
      const hook = yield* receiver(() => ({ status: 200, delayMs: 3_500 }))
      const { account, one, two } = yield* twoInstances(database, hook)
      const events = yield* seedEvents(account.id, 48, new Date()).pipe(Effect.provide(one))
      const answered = () => hook.arrivals.filter((a) => a.answered !== null).length
      yield* runWorkers([one, two], () => answered() >= 48, 40_000, () => hook.arrivals.length > 0)
      yield* Effect.sleep("1 second")
      expectExactlyOnce(hook, events.map((e) => e.id))
    }).pipe(Effect.scoped), 60_000)
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { call, TestApp } from "../support/app.js"
import { callFrom } from "../support/clients.js"
import { heldCatalog, realSleep, waitUntil } from "../support/heldCatalog.js"
import { expectProblem } from "../support/flows.js"

/*
 * Issue 33, finding 1 (Build: cost-weighted limits for public reads): a text search spends more of a client's
 * public-pages budget than a page view (PUBLIC_SEARCH_COST, default 4, of PUBLIC_PAGES_PER_MINUTE), and at
 * most CATALOG_CONCURRENCY catalog reads run at once: one more waits CATALOG_QUEUE_MS for a slot, then
 * answers 503 search_busy with Retry-After, while other requests (a sign-in mail, a write) are answered.
 */
const JSON_ACCEPT = { accept: "application/json" }

describe("catalog: a text search costs 4 page views of PUBLIC_PAGES_PER_MINUTE", () => {
  layer(TestApp({ config: { PUBLIC_PAGES_PER_MINUTE: "8" } }))((it) => {
    it.effect("two searches spend 8 page views; the third is 429; page views without text count 1 each", () =>
      Effect.gen(function*() {
        expect((yield* call("GET", "/listings?q=parser", { headers: JSON_ACCEPT })).status).toBe(200)
        expect((yield* call("GET", "/listings?q=cli&sort=stars", { headers: JSON_ACCEPT })).status).toBe(200)
        const refused = expectProblem(yield* call("GET", "/listings?q=parser", { headers: JSON_ACCEPT }), 429, "rate_limited")
        expect(refused.retry_after_seconds).toBeGreaterThan(0)
        // Without text (or with blank text), a catalog page is one page view: 8 of them fit.
        for (let i = 0; i < 8; i++) {
          expect((yield* callFrom("127.0.0.2", "GET", i % 2 === 0 ? "/listings" : "/listings?q=%20&topic=cli", { headers: JSON_ACCEPT })).status).toBe(200)
        }
        expect((yield* callFrom("127.0.0.2", "GET", "/", { headers: JSON_ACCEPT })).status).toBe(429)
        // One search and four page views fill the budget; a fifth view does not fit.
        expect((yield* callFrom("127.0.0.3", "GET", "/listings?q=json", { headers: JSON_ACCEPT })).status).toBe(200)
        for (let i = 0; i < 4; i++) expect((yield* callFrom("127.0.0.3", "GET", "/", { headers: JSON_ACCEPT })).status).toBe(200)
        expect((yield* callFrom("127.0.0.3", "GET", "/listings", { headers: JSON_ACCEPT })).status).toBe(429)

        yield* TestClock.adjust("1 minute")
        expect((yield* call("GET", "/listings?q=parser", { headers: JSON_ACCEPT })).status).toBe(200)
      }))
  })

  layer(TestApp({ config: { PUBLIC_PAGES_PER_MINUTE: "3", PUBLIC_SEARCH_COST: "10" } }))((it) => {
    it.effect("a search never costs more than the whole budget, so an unspent minute always has room for one", () =>
      Effect.gen(function*() {
        expect((yield* call("GET", "/listings?q=parser", { headers: JSON_ACCEPT })).status).toBe(200)
        expect((yield* call("GET", "/listings", { headers: JSON_ACCEPT })).status).toBe(429)
      }))
  })
})

const held = heldCatalog()

describe("catalog: at most CATALOG_CONCURRENCY catalog reads at once", () => {
  layer(TestApp({ storage: held.storage, config: { CATALOG_CONCURRENCY: "2", CATALOG_QUEUE_MS: "500" } }))((it) => {
    it.effect("a third read waits CATALOG_QUEUE_MS, then 503 search_busy with Retry-After; other requests go on; a freed slot passes to a waiter", () =>
      Effect.gen(function*() {
        const a = yield* Effect.fork(call("GET", "/listings?q=parser", { headers: JSON_ACCEPT }))
        const b = yield* Effect.fork(callFrom("127.0.0.2", "GET", "/listings", { headers: JSON_ACCEPT }))
        yield* waitUntil(() => held.entered === 2)

        // Both slots taken: a third read (a search, the home page) waits, and is turned away after 500 ms.
        const c = yield* Effect.fork(callFrom("127.0.0.3", "GET", "/listings?q=cli", { headers: JSON_ACCEPT }))
        const home = yield* Effect.fork(callFrom("127.0.0.4", "GET", "/", { headers: JSON_ACCEPT }))
        yield* realSleep(200)
        expect(c.unsafePoll()).toBeNull()
        // Meanwhile the rest of the service answers: a sign-in mail is a write.
        expect((yield* call("POST", "/auth/magic-link", { body: { email: "busy@example.com" } })).status).toBe(202)
        yield* TestClock.adjust("499 millis")
        yield* realSleep(100)
        expect(c.unsafePoll()).toBeNull()
        yield* TestClock.adjust("1 millis")
        yield* waitUntil(() => c.unsafePoll() !== null && home.unsafePoll() !== null)
        const busy = expectProblem(yield* Fiber.join(c), 503, "search_busy")
        expect(busy.retry_after_seconds).toBe(1)
        expect(busy.detail).toBe("Too many catalog searches are running right now. Try again in a moment.")
        const homeBusy = yield* Fiber.join(home)
        expectProblem(homeBusy, 503, "search_busy")
        expect(homeBusy.headers["retry-after"]).toBe("1")
        expect(held.entered).toBe(2)

        // A read that waits when a slot frees gets it: the held ones finish, then it runs.
        const d = yield* Effect.fork(callFrom("127.0.0.5", "GET", "/listings?q=json", { headers: JSON_ACCEPT }))
        yield* realSleep(200)
        yield* held.hold.open
        expect((yield* Fiber.join(a)).status).toBe(200)
        expect((yield* Fiber.join(b)).status).toBe(200)
        expect((yield* Fiber.join(d)).status).toBe(200)
        // Every slot is free again.
        const all = yield* Effect.all(
          ["127.0.0.6", "127.0.0.7", "127.0.0.8"].map((client) => callFrom(client, "GET", "/listings", { headers: JSON_ACCEPT })),
          { concurrency: "unbounded" }
        )
        expect(all.map((r) => r.status)).toStrictEqual([200, 200, 200])
      }).pipe(Effect.ensuring(held.hold.open)))
  })
})

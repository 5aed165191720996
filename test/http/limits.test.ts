import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { BASE_WALLET, call, signInWithKey, TestApp } from "../support/app.js"
import { expectProblem, GADGET_URL, listRepo, WIDGET_URL } from "../support/flows.js"

/** DECISIONS "Limits": every limit answers 429 with Retry-After. */

describe("management API: 600 requests a minute per credential", () => {
  layer(TestApp())((it) => {
    it.effect("the 601st request with one key is 429 with Retry-After; another credential is unaffected", () =>
      Effect.gen(function*() {
        const { session, key } = yield* signInWithKey("busy-seller@example.com")
        const statuses = new Map<number, number>()
        for (let i = 0; i < 600; i++) {
          const status = (yield* call("GET", "/my/stores", { token: key })).status
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
        }
        expect(Object.fromEntries(statuses)).toEqual({ 200: 600 })
        const refused = yield* call("GET", "/my/stores", { token: key })
        expectProblem(refused, 429, "rate_limited")
        const retryAfter = Number(refused.headers["retry-after"])
        expect(retryAfter).toBeGreaterThan(0)
        expect(retryAfter).toBeLessThanOrEqual(60)
        expect((yield* call("GET", "/my/stores", { token: session })).status).toBe(200)

        yield* TestClock.adjust("1 minute")
        expect((yield* call("GET", "/my/stores", { token: key })).status).toBe(200)
      }))
  })
})

describe("anonymous listing: 30 an hour per client address", () => {
  layer(TestApp())((it) => {
    it.effect("the 31st anonymous POST /repos is 429 with Retry-After; listing with a key still works", () =>
      Effect.gen(function*() {
        const body = { host_url: WIDGET_URL, price_usd: "1.00", wallet_base: BASE_WALLET }
        const first = yield* listRepo(body)
        expect(first.status).toBe(201)
        // Later attempts on the same repo are refused as already listed, but still count.
        for (let i = 1; i < 30; i++) expect((yield* listRepo(body)).status).toBe(409)
        const refused = yield* listRepo({ ...body, host_url: GADGET_URL })
        expectProblem(refused, 429, "rate_limited")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(3500)
        expectProblem(yield* call("GET", "/r/Octo-Org/Gadget", { headers: { accept: "application/json" } }), 404, "not_found")

        const { key } = yield* signInWithKey("signed-in@example.com")
        expect((yield* listRepo({ ...body, host_url: GADGET_URL }, key)).status).toBe(201)
      }))
  })
})

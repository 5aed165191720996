import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { call, TestApp } from "../support/app.js"
import { callFrom } from "../support/clients.js"
import { expectProblem } from "../support/flows.js"
import { BROWSER_ACCEPT } from "../support/pages.js"

/**
 * Issue 12, finding 5: the public pages under /r/ cost code-host calls (the owner's index, a listing's
 * preview) paid from the server's shared GitHub quota, so each client address may ask for 120 a minute.
 * Answers the front door serves from memory cost nothing and are not counted; this test asks for owner
 * pages (never served by the front door) under made-up names, so every request reaches the app.
 */
const JSON_ACCEPT = { accept: "application/json" }

describe("public pages: 120 a minute per client address", () => {
  layer(TestApp())((it) => {
    it.effect("the 121st /r/ page from one address is 429 with Retry-After; other addresses are unaffected", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 120; i++) {
          const reply = yield* call("GET", `/r/made-up-owner-${i}`, { headers: JSON_ACCEPT })
          expect(reply.status).toBe(404)
        }
        const refused = yield* call("GET", "/r/made-up-owner-120", { headers: JSON_ACCEPT })
        expectProblem(refused, 429, "rate_limited")
        const retryAfter = Number(refused.headers["retry-after"])
        expect(retryAfter).toBeGreaterThan(0)
        expect(retryAfter).toBeLessThanOrEqual(60)
        // A repo page and the HTML pages count against the same budget.
        expectProblem(yield* call("GET", "/r/Octo-Org/Widget", { headers: JSON_ACCEPT }), 429, "rate_limited")
        const page = yield* call("GET", "/r/Octo-Org", { headers: { accept: BROWSER_ACCEPT } })
        expect(page.status).toBe(429)
        expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
        expect(Number(page.headers["retry-after"])).toBeGreaterThan(0)

        // Another client address has its own budget.
        expect((yield* callFrom("127.0.0.2", "GET", "/r/Octo-Org", { headers: JSON_ACCEPT })).status).toBe(200)

        yield* TestClock.adjust("1 minute")
        expect((yield* call("GET", "/r/Octo-Org", { headers: JSON_ACCEPT })).status).toBe(200)
      }))
  })
})

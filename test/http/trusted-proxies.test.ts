import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { BASE_WALLET, call, TestApp } from "../support/app.js"
import { expectProblem, GADGET_URL, WIDGET_URL } from "../support/flows.js"

/**
 * Behind load balancers every connection comes from a balancer: per-client limits must count the client the
 * balancer names in X-Forwarded-For (TRUSTED_PROXIES), and nobody else's X-Forwarded-For may move a limit.
 * The limit used: anonymous listing, 30 an hour per client address (DECISIONS "Limits").
 */
const listAs = (forwarded: string | undefined, url = WIDGET_URL) =>
  call("POST", "/repos", {
    body: { host_url: url, price_usd: "1.00", wallet_base: BASE_WALLET },
    ...(forwarded === undefined ? {} : { headers: { "x-forwarded-for": forwarded } })
  })

/** Spends one client's 30 anonymous listings an hour; answers the 31st attempt's status. */
const spendThirty = (forwarded: (i: number) => string | undefined) =>
  Effect.gen(function*() {
    const statuses: Array<number> = []
    for (let i = 0; i < 30; i++) statuses.push((yield* listAs(forwarded(i))).status)
    // The first lists the repo, the rest are refused as already listed, and every one counts.
    expect(statuses.filter((s) => s !== 201 && s !== 409)).toEqual([])
    return yield* listAs(forwarded(30), GADGET_URL)
  })

describe("TRUSTED_PROXIES: per-client limits behind a load balancer", () => {
  layer(TestApp({ config: { TRUSTED_PROXIES: "127.0.0.1, ::1, 10.0.0.0/8" } }))((it) => {
    it.effect("each client the balancer names has its own limit; the balancer's own address is not what counts", () =>
      Effect.gen(function*() {
        expectProblem(yield* spendThirty(() => "203.0.113.7"), 429, "rate_limited")
        // Another client behind the same balancer is not refused (the repo is free to list).
        expect((yield* listAs("203.0.113.8", GADGET_URL)).status).toBe(201)
        // A chain of trusted proxies (10.x, appended by an inner balancer) still finds the client.
        expectProblem(yield* listAs("203.0.113.7, 10.1.2.3"), 429, "rate_limited")
      }))

    it.effect("what a client writes into X-Forwarded-For itself (left of the balancer's entry) is never read", () =>
      Effect.gen(function*() {
        // The client 198.51.100.9 sends a different made-up address each time; the balancer appends the real one.
        const refused = yield* spendThirty((i) => `192.0.2.${i + 1}, 198.51.100.9`)
        expectProblem(refused, 429, "rate_limited")
        expectProblem(yield* listAs("not-an-address, 198.51.100.9"), 429, "rate_limited")
      }))
  })

  layer(TestApp())((it) => {
    it.effect("without TRUSTED_PROXIES, X-Forwarded-For is ignored: changing it does not escape a limit", () =>
      Effect.gen(function*() {
        expectProblem(yield* spendThirty((i) => `203.0.113.${i + 1}`), 429, "rate_limited")
      }))
  })

  layer(TestApp({ config: { TRUSTED_PROXIES: "192.0.2.1" } }))((it) => {
    it.effect("a peer that is not a trusted proxy is the client, whatever X-Forwarded-For says", () =>
      Effect.gen(function*() {
        expectProblem(yield* spendThirty((i) => `203.0.113.${i + 1}`), 429, "rate_limited")
      }))
  })

  it.effect("a malformed TRUSTED_PROXIES stops the start with a message naming the setting and the entry", () =>
    Effect.gen(function*() {
      for (const bad of ["10.0.0.0/33", "example.com", "::1/129", "10.0.0.1/8/2", "10.0.0.0/x"]) {
        const exit = yield* Effect.exit(Effect.scoped(Layer.build(TestApp({ config: { TRUSTED_PROXIES: bad } }))))
        expect(Exit.isFailure(exit), bad).toBe(true)
        const message = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
        expect(message).toContain("TRUSTED_PROXIES")
        expect(message).toContain(bad)
      }
    }))
})

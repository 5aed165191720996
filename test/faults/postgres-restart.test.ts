/*
 * PostgreSQL restarted mid-run. The app runs in process over StorageSql on the production pool
 * (`pgClientForUrl`, as DATABASE_URL gives it) against a PRIVATE cluster started for this file, so the
 * machine's shared server is never stopped. Sales are made, the cluster is stopped (`pg_ctl -m fast`) while
 * one payment is being settled, requests during the outage must be answered (5xx problem, no hang), the
 * cluster starts again and the same app, without a restart, must serve again with every sale exactly once.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { pgClientForUrl } from "../../adapters/sql/PgClientLive.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { BASE_WALLET } from "../support/app.js"
import { REQUIRE_POSTGRES } from "../support/postgres.js"
import { PurchaseApp, REAL_TIME, sell, unb64 } from "../support/purchase.js"
import { type FakeFacilitator, startFakeFacilitator, transactionOf } from "./fakeFacilitator.js"
import { type PrivateCluster, startPrivateCluster } from "./privatePostgres.js"
import {
  buyTwin,
  eventually,
  expectNoDuplicates,
  fetchWithin,
  ledgerOf,
  livePaymentWithId,
  presentWithin,
  problemOf
} from "./support.js"

const started = await startPrivateCluster().then(
  (cluster) => ({ cluster, problem: undefined }),
  (e: unknown) => ({ cluster: undefined, problem: e instanceof Error ? e.message : String(e) })
)
const facilitator = await startFakeFacilitator()
afterAll(async () => {
  await facilitator.close()
  await started.cluster?.destroy()
})

const nonceOf = (call: { body: any }) => String(call.body?.paymentPayload?.payload?.authorization?.nonce)
const settlesOf = (fac: FakeFacilitator, nonce: string) => fac.calls.filter((c) => c.path === "/settle" && nonceOf(c) === nonce)

const is5xx = (s: number) => s >= 500 && s <= 599

const suite = (cluster: PrivateCluster) => {
  const app = PurchaseApp({
    storage: StorageSql.pipe(Layer.provide(pgClientForUrl(Redacted.make(cluster.url)))),
    config: { X402_FACILITATOR_URL: facilitator.url, X402_FACILITATOR_TIMEOUT_MS: "5000" }
  })

  layer(app, REAL_TIME)("PostgreSQL restarted mid-run (private cluster)", (it) => {
    it.effect("answers 5xx during the outage, recovers without a restart, and keeps every sale exactly once", () =>
      Effect.gen(function*() {
        const seller = yield* sell("pg-restart@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })

        // Before: three live sales and one test-twin sale.
        const before: Array<{ nonce: string; signature: unknown }> = []
        for (let i = 0; i < 3; i++) {
          const p = yield* livePaymentWithId(seller.live)
          const paid = yield* presentWithin(seller.live, p.signature)
          expect(paid.status, paid.body.toString("utf8").slice(0, 300)).toBe(200)
          before.push(p)
        }
        const twin = yield* buyTwin(seller.test)
        const ledgerBefore = yield* ledgerOf(seller.accountId)
        expect(ledgerBefore.map((s) => s.status)).toEqual(["settled", "settled", "settled", "settled"])

        // In flight: the facilitator holds the settle while the database goes away. Another payment is signed
        // now and first presented during the outage.
        const inFlight = yield* livePaymentWithId(seller.live)
        const duringOutage = yield* livePaymentWithId(seller.live)
        facilitator.settle = "hold"
        const firstTry = yield* Effect.fork(presentWithin(seller.live, inFlight.signature, 60_000))
        yield* eventually("the in-flight settle to reach the facilitator", () => settlesOf(facilitator, inFlight.nonce).length === 1)
        yield* Effect.promise(() => cluster.stop("fast"))

        // During the outage: every request is answered quickly; none hangs. An unpaid checkout request may get
        // the 402 the front door remembered (for RESPONSE_CACHE_MS, 2 s); once that expires, the app's problem.
        const origin = new URL(seller.live).origin
        for (const url of [seller.live, seller.test]) {
          const answer = yield* fetchWithin(url)
          if (answer.status !== 402) problemOf(answer, is5xx)
          expect(answer.ms).toBeLessThan(10_000)
        }
        yield* Effect.sleep("2500 millis")
        for (const url of [seller.live, seller.test]) {
          const answer = yield* fetchWithin(url)
          problemOf(answer, is5xx)
          expect(answer.ms).toBeLessThan(10_000)
        }
        problemOf(yield* fetchWithin(`${origin}/my/sales`, { authorization: `Bearer ${seller.key}` }), is5xx)
        const verifiesBefore = facilitator.paths().filter((p) => p === "/verify").length
        problemOf(yield* presentWithin(seller.live, duringOutage.signature), is5xx)
        problemOf(yield* presentWithin(seller.live, before[0]!.signature), is5xx)
        // Nothing reached the facilitator: the checkout could not even be looked up.
        expect(facilitator.paths().filter((p) => p === "/verify").length).toBe(verifiesBefore)

        // The held settle succeeds now, while the database is still down: the money has moved.
        facilitator.release()
        yield* Effect.sleep("1 second")
        facilitator.settle = "ok"

        yield* Effect.promise(() => cluster.start())
        // Recovered without a restart: the checkout answers its 402 again within a few seconds.
        yield* Effect.promise(async () => {
          const until = Date.now() + 15_000
          for (;;) {
            const res = await fetch(seller.live, { signal: AbortSignal.timeout(5_000) }).catch(() => null)
            if (res?.status === 402) return
            if (Date.now() > until) throw new Error(`the app did not recover: last status ${res?.status}`)
            await new Promise((r) => setTimeout(r, 200))
          }
        })

        // The in-flight payment: its request waited the outage out (the settled sale must not be lost while
        // the database is away) and delivered; presented again with its payment-identifier id, the same goods and no second settle.
        const first = yield* Fiber.join(firstTry)
        expect(first.status, first.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(first.headers.get("content-type")).toBe("application/gzip")
        const again = yield* presentWithin(seller.live, inFlight.signature, 60_000)
        expect(again.status, again.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(unb64(again.headers.get("payment-response"))).toMatchObject({ success: true, transaction: transactionOf({ paymentPayload: inFlight.signature }) })
        expect(settlesOf(facilitator, inFlight.nonce)).toHaveLength(1)

        // The payment first presented during the outage: one sale now.
        const late = yield* presentWithin(seller.live, duringOutage.signature)
        expect(late.status, late.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(settlesOf(facilitator, duringOutage.nonce)).toHaveLength(1)

        // A sale made before the outage, presented again with its id: the same goods, no new settle.
        const replay = yield* presentWithin(seller.live, before[0]!.signature)
        expect(replay.status).toBe(200)
        expect(settlesOf(facilitator, before[0]!.nonce)).toHaveLength(1)

        const after = yield* ledgerOf(seller.accountId)
        expectNoDuplicates(after)
        expect(after).toHaveLength(6)
        expect(after.map((s) => s.status)).toEqual(Array(6).fill("settled"))
        for (const s of ledgerBefore) expect(after.find((a) => a.id === s.id)).toEqual(s)
        expect(after.some((s) => s.transaction === twin.transaction)).toBe(true)
      }), 60_000)
  })
}

if (started.cluster !== undefined) {
  suite(started.cluster)
} else {
  const message = `Cannot start a private PostgreSQL cluster here (${started.problem})`
  if (REQUIRE_POSTGRES) {
    describe("PostgreSQL restarted mid-run (private cluster)", () => {
      it("starts a private cluster, as REQUIRE_POSTGRES=1 demands", () => {
        throw new Error(message)
      })
    })
  } else {
    console.warn(`${message}: skipping. Set REQUIRE_POSTGRES=1 to make this a failure.`)
    describe.skip("PostgreSQL restarted mid-run (private cluster)", () => {
      it("needs a private cluster", () => undefined)
    })
  }
}

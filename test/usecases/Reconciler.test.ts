/*
 * The reconciler: which pending sales one pass looks at (grace, limit, where it goes on) and what it reports.
 * Memory storage; a live facilitator whose chain answer each test scripts per sale, recording the order it
 * was asked in (concurrency 1 where the order matters). Each test names how pending sales could otherwise
 * starve, be raced, be looked at twice, or be miscounted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Layer, Logger, Option, TestClock } from "effect"
import type { SaleId } from "../../domain/Ids.js"
import type { Sale } from "../../domain/Sale.js"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aSale, at } from "../support/fixtures.js"
import { facilitatorLayer, SettlementsOn, spanNames, type Stub, stubFacilitator } from "./support.js"

type Ledger = SaleLedger["Type"]

/** What the chain says of each sale (by default: nobody can tell); a sale mapped to a defect dies. */
const chain = new Map<SaleId, Effect.Effect<SettlementStatus>>()

const setup = (wrap?: (ledger: Ledger) => Ledger) => {
  chain.clear()
  const live = stubFacilitator({ status: (sale) => chain.get(sale.id) ?? Effect.succeed({ _tag: "Unknown", reason: "no answer" }) })
  const layer = Reconciler.Default.pipe(
    Layer.provideMerge(SettlementsOn(facilitatorLayer({ live: Option.some(live), test: stubFacilitator() }), wrap))
  )
  return { live, layer }
}

const NOW = at("2024-03-02T00:00:00.000Z")

/** `n` pending sales created a second apart, the first an hour before NOW, on the ledger; `fields(i)` overrides. */
const pendingSales = (n: number, fields: (i: number) => Partial<ConstructorParameters<typeof Sale>[0]> = () => ({})) =>
  Effect.gen(function*() {
    const ledger = yield* SaleLedger
    const sales = Array.from({ length: n }, (_, i) => aSale({ accountId: null, createdAt: new Date(NOW.getTime() - 3_600_000 + i * 1000), ...fields(i) }))
    for (const sale of sales) yield* ledger.recordPending(sale)
    yield* TestClock.setTime(NOW.getTime())
    return sales
  })

/** The ids `status` was asked about since the last call. */
const askedSince = (live: Stub) => {
  const ids = [...live.asked]
  live.asked.length = 0
  return ids
}

const pass = (limit: number, grace: Duration.DurationInput = Duration.zero) =>
  Effect.flatMap(Reconciler, (r) => r.reconcilePending({ grace, limit, concurrency: 1 }))

const ids = (sales: ReadonlyArray<Sale>) => sales.map((s) => s.id)

describe("Reconciler.reconcilePending", () => {
  it.effect("leaves alone a sale younger than the grace (a purchase may still be waiting for its settle answer) and looks at an older one", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      const ledger = yield* SaleLedger
      const older = aSale({ accountId: null, createdAt: new Date(NOW.getTime() - 5 * 60_000 - 1) })
      const younger = aSale({ accountId: null, createdAt: new Date(NOW.getTime() - 5 * 60_000 + 1_000) })
      for (const sale of [older, younger]) yield* ledger.recordPending(sale)
      yield* TestClock.setTime(NOW.getTime())
      expect(yield* pass(10, "5 minutes")).toStrictEqual({ checked: 1, settled: 0, failed: 0, pending: 1, errors: 0 })
      expect(askedSince(live)).toStrictEqual([older.id])
      // Once the grace has passed, it is looked at too.
      yield* TestClock.adjust("2 seconds")
      expect(yield* pass(10, "5 minutes")).toMatchObject({ checked: 2 })
      expect(askedSince(live)).toStrictEqual([older.id, younger.id])
    }).pipe(Effect.provide(layer))
  })

  it.effect("walks every pending sale across passes when there are more than the limit, wrapping round within a pass: no sale starves behind stuck ones, none is looked at twice in a pass", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      const [s1, s2, s3, s4, s5] = ids(yield* pendingSales(5))
      const passes: Array<ReadonlyArray<SaleId>> = []
      for (let i = 0; i < 5; i++) {
        expect(yield* pass(2)).toStrictEqual({ checked: 2, settled: 0, failed: 0, pending: 2, errors: 0 })
        passes.push(askedSince(live))
      }
      expect(passes).toStrictEqual([[s1, s2], [s3, s4], [s5, s1], [s2, s3], [s4, s5]])
    }).pipe(Effect.provide(layer))
  })

  it.effect("starts the next pass from the oldest once a pass saw every pending sale (a short pass resets the position)", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      const sales = ids(yield* pendingSales(3))
      expect(yield* pass(5)).toMatchObject({ checked: 3 })
      expect(askedSince(live)).toStrictEqual(sales)
      expect(yield* pass(5)).toMatchObject({ checked: 3 })
      expect(askedSince(live)).toStrictEqual(sales)
      // And after a pass that wrapped round short of the limit: from the oldest again.
      expect(yield* pass(2)).toMatchObject({ checked: 2 })
      expect(askedSince(live)).toStrictEqual(sales.slice(0, 2))
      expect(yield* pass(4)).toMatchObject({ checked: 3 })
      expect(askedSince(live)).toStrictEqual([sales[2], sales[0], sales[1]])
      expect(yield* pass(4)).toMatchObject({ checked: 3 })
      expect(askedSince(live)).toStrictEqual(sales)
    }).pipe(Effect.provide(layer))
  })

  it.effect("never looks at a sale twice in one pass when fewer sales are left than the limit after it wrapped round", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      const [s1, s2, s3, s4, s5, s6] = ids(yield* pendingSales(6))
      // The first pass settles three of the four it looks at: three stay pending, fewer than the limit.
      for (const id of [s1, s2, s3]) chain.set(id!, Effect.succeed({ _tag: "Settled", transaction: `0x${id}` }))
      expect(yield* pass(4)).toStrictEqual({ checked: 4, settled: 3, failed: 0, pending: 1, errors: 0 })
      expect(askedSince(live)).toStrictEqual([s1, s2, s3, s4])
      // After s4 come s5 and s6; starting over from the oldest finds s4, s5 and s6 again: s4 alone is added.
      expect(yield* pass(4)).toStrictEqual({ checked: 3, settled: 0, failed: 0, pending: 3, errors: 0 })
      expect(askedSince(live)).toStrictEqual([s5, s6, s4])
    }).pipe(Effect.provide(layer))
  })

  it.effect("asks the store once per pass unless it reached the end after its position (no query whose rows are all thrown away)", () => {
    const queries: Array<{ readonly limit: number; readonly after: boolean }> = []
    const { layer } = setup((ledger) => ({
      ...ledger,
      listPending: (options) => Effect.suspend(() => (queries.push({ limit: options.limit, after: options.after !== undefined }), ledger.listPending(options)))
    }))
    return Effect.gen(function*() {
      yield* pendingSales(5)
      // A pass from the oldest that comes up short saw everything: nothing to wrap round to.
      yield* pass(6)
      expect(queries.splice(0)).toStrictEqual([{ limit: 6, after: false }])
      yield* pass(2)
      yield* pass(2)
      yield* pass(2)
      expect(queries.splice(0)).toStrictEqual([
        { limit: 2, after: false },
        { limit: 2, after: true },
        { limit: 2, after: true },
        { limit: 1, after: false }
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("looks at nothing with a limit of 0", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      yield* pendingSales(2)
      expect(yield* pass(0)).toStrictEqual({ checked: 0, settled: 0, failed: 0, pending: 0, errors: 0 })
      expect(yield* pass(1)).toMatchObject({ checked: 1 })
      expect(live.calls.status).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("counts each outcome exactly, and one sale whose resolution dies (a storage or RPC defect) neither stops the others nor counts as resolved", () => {
    const { live, layer } = setup()
    return Effect.gen(function*() {
      const [settled, spent, expired, unknown, broken, notYet] = ids(yield* pendingSales(6, (i) => i === 2 ? { settleBy: at("2024-03-01T20:00:00.000Z") } : {}))
      chain.set(settled!, Effect.succeed({ _tag: "Settled", transaction: "0xpaid" }))
      chain.set(spent!, Effect.succeed({ _tag: "Failed", reason: "authorization_canceled" }))
      chain.set(expired!, Effect.succeed({ _tag: "Unsettled" }))
      chain.set(broken!, Effect.die("RPC client bug"))
      chain.set(notYet!, Effect.succeed({ _tag: "Unsettled" }))
      expect(yield* pass(10)).toStrictEqual({ checked: 6, settled: 1, failed: 2, pending: 2, errors: 1 })
      expect(askedSince(live)).toStrictEqual([settled, spent, expired, unknown, broken, notYet])
      const ledger = yield* SaleLedger
      const statusOf = (id: SaleId | undefined) => Effect.map(ledger.findById(id!), (s) => Option.getOrThrow(s).status)
      expect(yield* Effect.all([settled, spent, expired, unknown, broken, notYet].map(statusOf))).toStrictEqual([
        "settled", "failed", "failed", "pending", "pending", "pending"
      ])
      // The broken one is tried again by the next pass.
      chain.set(broken!, Effect.succeed({ _tag: "Settled", transaction: "0xlate" }))
      expect(yield* pass(10)).toStrictEqual({ checked: 3, settled: 1, failed: 0, pending: 2, errors: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("lets an interruption through (a host stopping) instead of counting it as one sale's error", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const [first] = ids(yield* pendingSales(2))
      chain.set(first!, Effect.interrupt)
      const exit = yield* Effect.exit(pass(10))
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("resolves four sales at a time by default (one slow RPC answer does not hold up the pass)", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const sales = ids(yield* pendingSales(7))
      let inFlight = 0
      let most = 0
      for (const id of sales) {
        chain.set(id, Effect.gen(function*() {
          inFlight++
          most = Math.max(most, inFlight)
          for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
          inFlight--
          return { _tag: "Unknown", reason: "no answer" } as const
        }))
      }
      expect(yield* Effect.flatMap(Reconciler, (r) => r.reconcilePending({ grace: Duration.zero, limit: 10 }))).toMatchObject({ checked: 7, pending: 7 })
      expect(most).toBe(4)
    }).pipe(Effect.provide(layer))
  })

  it.effect("logs each sale it resolved (id and outcome) and each that broke (id and cause), but not the ones still pending: an operator can follow every change of state", () => {
    const { layer } = setup()
    const logs: Array<{ readonly level: string; readonly message: ReadonlyArray<unknown> }> = []
    const capture = Logger.make(({ logLevel, message }) => {
      logs.push({ level: logLevel.label, message: Array.isArray(message) ? message : [message] })
    })
    return Effect.gen(function*() {
      const [settled, failed, pending, broken] = ids(yield* pendingSales(4))
      chain.set(settled!, Effect.succeed({ _tag: "Settled", transaction: "0xpaid" }))
      chain.set(failed!, Effect.succeed({ _tag: "Failed", reason: "transaction_failed_on_chain" }))
      chain.set(broken!, Effect.die(new Error("RPC client bug")))
      yield* pass(10)
      void pending
      const ours = logs.filter((l) => typeof l.message[0] === "string" && /reconcil/i.test(l.message[0] as string))
      expect(ours.map((l) => [l.level, l.message[0], (l.message[1] as { sale_id?: string }).sale_id])).toStrictEqual([
        ["INFO", "Reconciled a pending sale", settled],
        ["INFO", "Reconciled a pending sale", failed],
        ["WARN", "Reconciling a pending sale failed", broken]
      ])
      expect(ours[0]!.message[1]).toStrictEqual({ sale_id: settled, status: "settled" })
      expect(ours[1]!.message[1]).toStrictEqual({ sale_id: failed, status: "failed" })
      expect((ours[2]!.message[1] as { cause: string }).cause).toContain("RPC client bug")
    }).pipe(Effect.provide(layer), Effect.provide(Logger.add(capture)))
  })

  it.effect("runs each pass in a span named Reconciler.reconcilePending, around each sale's Settlements.resolve (what an operator's tracer shows)", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const [sale] = ids(yield* pendingSales(1))
      let seen: ReadonlyArray<string> = []
      chain.set(sale!, Effect.map(spanNames, (names) => {
        seen = names
        return { _tag: "Unknown", reason: "no answer" } as const
      }))
      yield* pass(1)
      expect(seen.slice(0, 2)).toStrictEqual(["Settlements.resolve", "Reconciler.reconcilePending"])
    }).pipe(Effect.provide(layer))
  })
})

/*
 * Issue 28: a storage failure is a `StorageError` in the storage ports' error channel, not a defect. Once money
 * may have moved, `Settlements` retries the write through a `StorageError` (the database did not answer) and
 * through nothing else: a defect is a bug, and retrying a bug for 30 seconds only hides it.
 * Memory storage, with a ledger whose `settle` is scripted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, type Duration, Effect, Exit, Fiber, Option, TestClock } from "effect"
import type { SaleLedger } from "../../ports/SaleLedger.js"
import { SaleLedger as Ledger } from "../../ports/SaleLedger.js"
import { isStorageError, StorageError } from "../../ports/StorageError.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { aSale, at } from "../support/fixtures.js"
import { facilitatorLayer, SettlementsOn, stubFacilitator } from "./support.js"

type LedgerService = SaleLedger["Type"]

/** A ledger whose `settle` answers `first` for its first `times` calls, then writes. */
const scripted = (first: Effect.Effect<never, StorageError>, times: number, calls: { settle: number }) => (ledger: LedgerService): LedgerService => ({
  ...ledger,
  settle: (sale, event) => Effect.suspend(() => ++calls.settle <= times ? first : ledger.settle(sale, event))
})

const layerWith = (wrap: (ledger: LedgerService) => LedgerService) =>
  SettlementsOn(facilitatorLayer({ live: Option.some(stubFacilitator({})), test: stubFacilitator({}) }), wrap)

const PAID = { success: true, transaction: "0xpaid", payer: null, errorReason: null } as const

const pendingSale = Effect.gen(function*() {
  const sale = aSale({ accountId: null, settleBy: at("2024-03-01T10:05:00.000Z") })
  yield* Effect.flatMap(Ledger, (l) => l.recordPending(sale))
  return sale
})

const storedStatus = (id: ReturnType<typeof aSale>["id"]) =>
  Effect.flatMap(Ledger, (l) => Effect.map(l.findById(id), (s) => Option.getOrThrow(s).status))

/** markSettled of a fresh pending sale, forked; the clock moved by `wait`; its exit. */
const settleAfter = (wait: Duration.DurationInput) =>
  Effect.gen(function*() {
    const sale = yield* pendingSale
    const fiber = yield* Effect.fork(Effect.flatMap(Settlements, (s) => s.markSettled(sale, { ...PAID, network: sale.network })))
    yield* TestClock.adjust(wait)
    return { sale, exit: yield* Fiber.await(fiber) }
  })

describe("StorageError in the storage ports' error channel", () => {
  it.effect("a settle that fails twice with StorageError({ unavailable: true }) is retried, and the sale settles", () => {
    const calls = { settle: 0 }
    const unavailable = Effect.fail(new StorageError({ unavailable: true, message: "the database did not answer" }))
    return Effect.gen(function*() {
      const { exit, sale } = yield* settleAfter("5 seconds")
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ status: "settled", transaction: "0xpaid" })
      expect(yield* storedStatus(sale.id)).toBe("settled")
      expect(calls.settle).toBe(3)
    }).pipe(Effect.provide(layerWith(scripted(unavailable, 2, calls))))
  })

  it.effect("a defect of settle is not retried: it ends the call at once and the sale stays pending", () => {
    const calls = { settle: 0 }
    return Effect.gen(function*() {
      const { exit, sale } = yield* settleAfter("1 minute")
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(calls.settle).toBe(1)
      expect(yield* storedStatus(sale.id)).toBe("pending")
    }).pipe(Effect.provide(layerWith(scripted(Effect.die("a bug"), 1, calls))))
  })

  it.effect("a StorageError that outlasts the retries reaches the caller as a typed failure, not a defect", () => {
    const calls = { settle: 0 }
    const broken = Effect.fail(new StorageError({ unavailable: false, message: "Failed to execute statement" }))
    return Effect.gen(function*() {
      const { exit } = yield* settleAfter("1 minute")
      expect(Exit.isFailure(exit) && !Cause.isDie(exit.cause)).toBe(true)
      const failure = Exit.isFailure(exit) ? Chunk.head(Cause.failures(exit.cause)) : Option.none()
      expect(Option.exists(failure, isStorageError)).toBe(true)
      expect(calls.settle).toBeGreaterThan(1)
    }).pipe(Effect.provide(layerWith(scripted(broken, Number.POSITIVE_INFINITY, calls))))
  })
})

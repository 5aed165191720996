/*
 * Settlements, the one place a sale ends its life (pending → settled or failed), on memory storage with a
 * facilitator whose chain answer each test scripts. Every test names the bug or the attack it stops: goods or
 * a `sale.settled` webhook for money that never moved, two events for one sale, a settled sale marked failed,
 * a sale failed while its payment may still land.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { Sale } from "../../domain/Sale.js"
import { salesFailed, salesSettled } from "../../domain/Metrics.js"
import { saleSettledBody } from "../../domain/rules/SaleEvent.js"
import { SETTLE_BY_MARGIN_MS, Settlements } from "../../domain/usecases/Settlements.js"
import { AUTHORIZATION_USED_ELSEWHERE, TRANSACTION_FAILED } from "../../domain/SettlementReasons.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Outbox } from "../../ports/Outbox.js"
import type { Settlement, SettlementStatus } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { isStorageError, StorageError } from "../../ports/StorageError.js"
import { ReceiptSigner } from "../../ports/ReceiptSigner.js"
import { verifyReceipt } from "../../codec/VerifyReceipt.js"
import { anAccount, aSale, at } from "../support/fixtures.js"
import { type Answers, counted, facilitatorLayer, SettlementsOn, spanNames, stubFacilitator } from "./support.js"

type Ledger = SaleLedger["Type"]

/** A live facilitator (or none, with `live: null`) and a test one, each answering `status` as scripted. */
const setup = (options: { readonly live?: Answers | null; readonly test?: Answers; readonly wrap?: (ledger: Ledger) => Ledger } = {}) => {
  const live = options.live === null ? Option.none() : Option.some(stubFacilitator(options.live ?? {}))
  const test = stubFacilitator(options.test ?? {})
  return { live: Option.getOrUndefined(live), test, layer: SettlementsOn(facilitatorLayer({ live, test }), options.wrap) }
}

const answering = (status: SettlementStatus): Answers => ({ status: () => Effect.succeed(status) })
const SETTLED: SettlementStatus = { _tag: "Settled", transaction: "0xchain" }
const UNSETTLED: SettlementStatus = { _tag: "Unsettled" }
const UNKNOWN: SettlementStatus = { _tag: "Unknown", reason: "not final yet" }

const SETTLE_BY = at("2024-03-01T10:05:00.000Z")
/** Puts the clock `ms` after the sale's settleBy plus the margin. */
const pastMargin = (ms: number) => TestClock.setTime(SETTLE_BY.getTime() + SETTLE_BY_MARGIN_MS + ms)

const stored = (sale: Sale) => Effect.flatMap(SaleLedger, (l) => Effect.map(l.findById(sale.id), Option.getOrThrow))
const eventsOf = (sale: Sale) => Effect.flatMap(Outbox, (o) => o.findBySale(sale.id))

/** A seller with a webhook, and a pending sale of it on the ledger. */
const sellerWithWebhook = (fields: Partial<ConstructorParameters<typeof Sale>[0]> = {}) =>
  Effect.gen(function*() {
    const account = yield* Effect.flatMap(AccountStore, (s) => s.insertOrGet(anAccount({ webhookUrl: "https://seller.example/hooks" })))
    const sale = aSale({ accountId: account.id, settleBy: SETTLE_BY, ...fields })
    yield* Effect.flatMap(SaleLedger, (l) => l.recordPending(sale))
    return { account, sale }
  })

const pendingSale = (fields: Partial<ConstructorParameters<typeof Sale>[0]> = {}) =>
  Effect.gen(function*() {
    const sale = aSale({ accountId: null, settleBy: SETTLE_BY, ...fields })
    yield* Effect.flatMap(SaleLedger, (l) => l.recordPending(sale))
    return sale
  })

const LIVE_BASE = { livemode: "true", chain: "base" }
const TEST_SOLANA = { livemode: "false", chain: "solana" }

describe("Settlements.resolve", () => {
  it.effect("settles a sale the chain shows settled, with the chain's transaction, the sale's payer and one sale.settled event for a seller with a webhook", () => {
    const { live, layer } = setup({ live: answering(SETTLED) })
    return Effect.gen(function*() {
      const { account, sale } = yield* sellerWithWebhook()
      yield* TestClock.setTime(at("2024-03-01T10:02:00.000Z").getTime())
      const before = yield* counted(salesSettled, LIVE_BASE)

      const resolved = yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))

      const expected = { status: "settled", transaction: "0xchain", payer: sale.payer, settledAt: at("2024-03-01T10:02:00.000Z"), failureReason: null }
      expect(resolved).toMatchObject(expected)
      expect(yield* stored(sale)).toStrictEqual(resolved)
      const events = yield* eventsOf(sale)
      expect(events).toHaveLength(1)
      const event = events[0]!
      expect(event).toMatchObject({
        accountId: account.id,
        saleId: sale.id,
        status: "pending",
        attempts: 0,
        lastError: null,
        createdAt: at("2024-03-01T10:02:00.000Z"),
        firstAttemptAt: null,
        nextAttemptAt: at("2024-03-01T10:02:00.000Z")
      })
      // The event names what was sold and carries the receipt the buyer's download does (the archive not cut yet).
      const receipt = JSON.parse(event.body).data.receipt
      expect(event.body).toBe(saleSettledBody(event.id, resolved, at("2024-03-01T10:02:00.000Z"), { archive: null, receipt }))
      const { keys } = yield* ReceiptSigner
      const checked = yield* Effect.promise(() => verifyReceipt(receipt, keys))
      expect(checked).toMatchObject({ valid: true, claims: { sale: sale.id, commit: sale.commitSha, transaction: "0xchain", payer: sale.payer, archive: null, deliveredAt: 1709287320 } })
      expect(live!.calls.status).toBe(1)
      expect(yield* counted(salesSettled, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("queues no sale.settled event for a seller without a webhook URL (nobody to send it to)", () => {
    const { layer } = setup({ live: answering(SETTLED) })
    return Effect.gen(function*() {
      const account = yield* Effect.flatMap(AccountStore, (s) => s.insertOrGet(anAccount({ webhookUrl: null })))
      const sale = yield* pendingSale({ accountId: account.id })
      const resolved = yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))
      expect(resolved.status).toBe("settled")
      expect((yield* stored(sale)).status).toBe("settled")
      expect(yield* eventsOf(sale)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("queues no event for an anonymous listing's sale (no account)", () => {
    const { layer } = setup({ live: answering(SETTLED) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      expect((yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).status).toBe("settled")
      expect(yield* eventsOf(sale)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a chain answer that names no transaction does not erase the one the sale already knows", () => {
    const { layer } = setup({ live: answering({ _tag: "Settled", transaction: null }) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale({ transaction: "0xknown" })
      const resolved = yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))
      expect(resolved).toMatchObject({ status: "settled", transaction: "0xknown" })
      expect(yield* stored(sale)).toMatchObject({ status: "settled", transaction: "0xknown" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps a not-yet-settled sale pending up to settleBy + the margin, to the millisecond: an RPC node lagging a block never fails a payment that lands", () => {
    const { live, layer } = setup({ live: answering(UNSETTLED) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      const settlements = yield* Settlements
      for (const t of [SETTLE_BY.getTime() - 1_000, SETTLE_BY.getTime(), SETTLE_BY.getTime() + SETTLE_BY_MARGIN_MS]) {
        yield* TestClock.setTime(t)
        expect(yield* settlements.resolve(sale)).toStrictEqual(sale)
        expect(yield* stored(sale)).toStrictEqual(sale)
      }
      expect(live!.calls.status).toBe(3)
      expect(yield* eventsOf(sale)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("fails a sale still unsettled 1 ms past settleBy + the margin: its authorization can never settle any more, so the buyer is told instead of waiting for ever", () => {
    const { layer } = setup({ live: answering(UNSETTLED) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      yield* pastMargin(1)
      const before = yield* counted(salesFailed, LIVE_BASE)
      const resolved = yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))
      expect(resolved).toStrictEqual(new Sale({ ...sale, status: "failed", failureReason: "not_settled_before_expiry" }))
      expect(yield* stored(sale)).toMatchObject({ status: "failed", failureReason: "not_settled_before_expiry", settledAt: null })
      expect(yield* eventsOf(sale)).toStrictEqual([])
      expect(yield* counted(salesFailed, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads the clock before asking the chain: an answer that took long does not turn 'not settled at the margin' into a failure", () => {
    const slow: Answers = { status: () => Effect.as(TestClock.adjust("10 seconds"), UNSETTLED) }
    const { layer } = setup({ live: slow })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      yield* pastMargin(0)
      expect((yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).status).toBe("pending")
      expect((yield* stored(sale)).status).toBe("pending")
    }).pipe(Effect.provide(layer))
  })

  it.effect("never fails an unsettled sale that names no settleBy (nothing says its payment cannot land later)", () => {
    const { layer } = setup({ live: answering(UNSETTLED) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale({ settleBy: null })
      yield* TestClock.setTime(at("2100-01-01T00:00:00.000Z").getTime())
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).toStrictEqual(sale)
      expect(yield* stored(sale)).toStrictEqual(sale)
    }).pipe(Effect.provide(layer))
  })

  it.effect("fails a sale whose authorization the chain shows spent by another transfer, with exactly the chain's reason and no event (a nonce twin gets no goods and no webhook)", () => {
    const { layer } = setup({ live: answering({ _tag: "Failed", reason: AUTHORIZATION_USED_ELSEWHERE }) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      // Well before settleBy: a spent authorization fails the sale at once, whatever the time.
      yield* TestClock.setTime(at("2024-03-01T10:01:00.000Z").getTime())
      const before = yield* counted(salesFailed, LIVE_BASE)
      const settledBefore = yield* counted(salesSettled, LIVE_BASE)
      const resolved = yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))
      expect(resolved).toMatchObject({ status: "failed", failureReason: AUTHORIZATION_USED_ELSEWHERE, transaction: null, settledAt: null })
      expect(yield* stored(sale)).toStrictEqual(resolved)
      expect(yield* eventsOf(sale)).toStrictEqual([])
      expect(yield* counted(salesFailed, LIVE_BASE)).toBe(before + 1)
      expect(yield* counted(salesSettled, LIVE_BASE)).toBe(settledBefore)
    }).pipe(Effect.provide(layer))
  })

  it.effect("leaves a sale pending, writing nothing, while nobody can tell (RPC down, transfer not final): money may have moved, so it is neither settled nor failed", () => {
    const { layer } = setup({ live: answering(UNKNOWN) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      // Long past settleBy: "unknown" is never read as "unsettled".
      yield* pastMargin(3_600_000)
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).toStrictEqual(sale)
      expect(yield* stored(sale)).toStrictEqual(sale)
      expect(yield* eventsOf(sale)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("leaves a sale pending, writing nothing, while what the buyer signed is on chain but not final: a reorg could still undo it, so neither goods nor a failure yet", () => {
    const { layer } = setup({ live: answering({ _tag: "NotFinal", reason: "transfer not finalized" }) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      yield* pastMargin(3_600_000)
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).toStrictEqual(sale)
      expect(yield* stored(sale)).toStrictEqual(sale)
      expect(yield* eventsOf(sale)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers a settled or failed sale as stored without asking the chain: a settled sale is never re-judged (and never failed), a failed one never revived", () => {
    const { live, layer } = setup({ live: answering({ _tag: "Failed", reason: TRANSACTION_FAILED }) })
    return Effect.gen(function*() {
      const settlements = yield* Settlements
      const ledger = yield* SaleLedger
      const settled = aSale({ accountId: null, status: "settled", transaction: "0xpaid", settledAt: at("2024-03-01T10:01:00.000Z") })
      const failed = aSale({ accountId: null, status: "failed", failureReason: "insufficient_funds" })
      for (const sale of [settled, failed]) yield* ledger.recordPending(sale)
      yield* pastMargin(1)
      expect(yield* settlements.resolve(settled)).toStrictEqual(settled)
      expect(yield* settlements.resolve(failed)).toStrictEqual(failed)
      expect(yield* stored(settled)).toStrictEqual(settled)
      expect(yield* stored(failed)).toStrictEqual(failed)
      expect(live!.calls.status).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers a stale pending copy with the stored settled sale, without asking the chain (a retry holding an old copy cannot re-judge it)", () => {
    const { live, layer } = setup({ live: answering(UNSETTLED) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const settlements = yield* Settlements
      const settled = yield* settlements.markSettled(sale, { success: true, transaction: "0xfirst", network: sale.network, payer: null, errorReason: null })
      yield* pastMargin(1)
      expect(yield* settlements.resolve(sale)).toStrictEqual(settled)
      expect(yield* stored(sale)).toStrictEqual(settled)
      expect(live!.calls.status).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("resolves a sale the ledger does not know from the copy given but never settles it (no event, no settled sale out of nowhere)", () => {
    const { layer } = setup({ live: answering(SETTLED) })
    return Effect.gen(function*() {
      const { account } = yield* sellerWithWebhook()
      const unknown = aSale({ accountId: account.id, settleBy: SETTLE_BY })
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(unknown))).toStrictEqual(unknown)
      expect(yield* Effect.flatMap(SaleLedger, (l) => l.findById(unknown.id))).toStrictEqual(Option.none())
      expect(yield* eventsOf(unknown)).toStrictEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("leaves a live sale as it is when the operator configured no live facilitator (never asks the test twin about real money)", () => {
    const { test, layer } = setup({ live: null, test: answering(SETTLED) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale({ livemode: true })
      yield* pastMargin(1)
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(sale))).toStrictEqual(sale)
      expect(yield* stored(sale)).toStrictEqual(sale)
      expect(test.calls.status).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("asks the test twin about a test sale and the live facilitator about a live one: test money never settles a live sale, nor the reverse", () => {
    const { live, test, layer } = setup({ live: answering(UNKNOWN), test: answering(SETTLED) })
    return Effect.gen(function*() {
      const settlements = yield* Settlements
      const testSale = yield* pendingSale({ livemode: false, chain: "solana", network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" })
      const liveSale = yield* pendingSale({ livemode: true })
      const testBefore = yield* counted(salesSettled, TEST_SOLANA)

      expect((yield* settlements.resolve(testSale)).status).toBe("settled")
      expect({ live: live!.calls.status, test: test.calls.status }).toStrictEqual({ live: 0, test: 1 })
      expect(yield* counted(salesSettled, TEST_SOLANA)).toBe(testBefore + 1)

      expect((yield* settlements.resolve(liveSale)).status).toBe("pending")
      expect({ live: live!.calls.status, test: test.calls.status }).toStrictEqual({ live: 1, test: 1 })
      expect(live!.asked).toStrictEqual([liveSale.id])
      expect(test.asked).toStrictEqual([testSale.id])
    }).pipe(Effect.provide(layer))
  })
})

describe("Settlements.markSettled", () => {
  const settlement = (sale: Sale, transaction: string): Settlement => ({ success: true, transaction, network: sale.network, payer: null, errorReason: null })

  it.effect("called twice (a purchase and a retry), queues one event and counts one sale; the second call answers the sale as the first stored it", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      const settlements = yield* Settlements
      const before = yield* counted(salesSettled, LIVE_BASE)
      yield* TestClock.setTime(at("2024-03-01T10:01:00.000Z").getTime())
      const first = yield* settlements.markSettled(sale, settlement(sale, "0xfirst"))
      yield* TestClock.setTime(at("2024-03-01T10:02:00.000Z").getTime())
      const second = yield* settlements.markSettled(sale, settlement(sale, "0xsecond"))
      expect(first).toMatchObject({ status: "settled", transaction: "0xfirst", settledAt: at("2024-03-01T10:01:00.000Z") })
      expect(second).toStrictEqual(first)
      expect(yield* stored(sale)).toStrictEqual(first)
      expect(yield* eventsOf(sale)).toHaveLength(1)
      expect(yield* counted(salesSettled, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("racing itself (the buyer's retry and the reconciler at once) queues one event; both answers are the one stored sale", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      const settlements = yield* Settlements
      const before = yield* counted(salesSettled, LIVE_BASE)
      const answers = yield* Effect.all(
        ["0xa", "0xb", "0xc"].map((tx) => settlements.markSettled(sale, settlement(sale, tx))),
        { concurrency: "unbounded" }
      )
      const final = yield* stored(sale)
      expect(final.status).toBe("settled")
      for (const answer of answers) expect(answer).toStrictEqual(final)
      expect(yield* eventsOf(sale)).toHaveLength(1)
      expect(yield* counted(salesSettled, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps the sale's payer when the settle answer names none (x402 v2 makes it optional): a receipt always names who paid", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const settled = yield* Effect.flatMap(Settlements, (s) => s.markSettled(sale, settlement(sale, "0xpaid")))
      expect(settled.payer).toBe(sale.payer)
      expect((yield* stored(sale)).payer).toBe(sale.payer)
    }).pipe(Effect.provide(layer))
  })
})

describe("Settlements.markFailed", () => {
  it.effect("never marks a settled sale failed: the seller was paid, the buyer keeps the goods", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const settlements = yield* Settlements
      const settled = yield* settlements.markSettled(sale, { success: true, transaction: "0xpaid", network: sale.network, payer: null, errorReason: null })
      const before = yield* counted(salesFailed, LIVE_BASE)
      expect(yield* settlements.markFailed(sale, "not_settled_before_expiry")).toStrictEqual(settled)
      expect(yield* stored(sale)).toStrictEqual(settled)
      expect(yield* counted(salesFailed, LIVE_BASE)).toBe(before)
    }).pipe(Effect.provide(layer))
  })

  it.effect("marks a pending sale failed once: a second reason never overwrites the first, and it counts once", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const settlements = yield* Settlements
      const before = yield* counted(salesFailed, LIVE_BASE)
      const failed = yield* settlements.markFailed(sale, AUTHORIZATION_USED_ELSEWHERE)
      expect(failed).toStrictEqual(new Sale({ ...sale, status: "failed", failureReason: AUTHORIZATION_USED_ELSEWHERE }))
      expect(yield* settlements.markFailed(sale, "not_settled_before_expiry")).toStrictEqual(failed)
      expect(yield* stored(sale)).toStrictEqual(failed)
      expect(yield* counted(salesFailed, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })
})

describe("Settlements: recording through a storage outage (durably)", () => {
  /** The store did not answer (what the SQL adapters make of a lost connection). */
  const outage = (message: string) => Effect.fail(new StorageError({ unavailable: true, message }))

  /** A ledger whose `settle` first does `first` `times` times, then writes. */
  const flaky = (first: Effect.Effect<never, StorageError>, times: number, calls: { settle: number }) => (ledger: Ledger): Ledger => ({
    ...ledger,
    settle: (sale, event) => Effect.suspend(() => ++calls.settle <= times ? first : ledger.settle(sale, event))
  })

  it.effect("retries a settled sale's write that broke (the money moved: giving up would lose the record) and it lands once, with one event", () => {
    const calls = { settle: 0 }
    const { layer } = setup({ wrap: flaky(outage("connection reset"), 1, calls) })
    return Effect.gen(function*() {
      const { sale } = yield* sellerWithWebhook()
      const fiber = yield* Effect.fork(Effect.flatMap(Settlements, (s) =>
        s.markSettled(sale, { success: true, transaction: "0xpaid", network: sale.network, payer: null, errorReason: null })))
      yield* TestClock.adjust("1 second")
      const settled = yield* Fiber.join(fiber)
      expect(settled).toMatchObject({ status: "settled", transaction: "0xpaid" })
      expect(yield* stored(sale)).toStrictEqual(settled)
      expect(yield* eventsOf(sale)).toHaveLength(1)
      expect(calls.settle).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("gives up after about 30 seconds of a store that keeps breaking: the request ends with the StorageError instead of hanging", () => {
    const calls = { settle: 0 }
    const { layer } = setup({ wrap: flaky(outage("database down"), Number.POSITIVE_INFINITY, calls) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const fiber = yield* Effect.fork(Effect.flatMap(Settlements, (s) =>
        s.markSettled(sale, { success: true, transaction: "0xpaid", network: sale.network, payer: null, errorReason: null })))
      yield* TestClock.adjust("20 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      const tried = calls.settle
      expect(tried).toBeGreaterThan(3)
      yield* TestClock.adjust("20 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && Cause.failures(exit.cause).pipe(Chunk.some(isStorageError))).toBe(true)
      expect(calls.settle).toBeGreaterThan(tried)
      expect((yield* stored(sale)).status).toBe("pending")
    }).pipe(Effect.provide(layer))
  })

  it.effect("does not retry an interrupted write (a shutdown is not a storage failure to wait out)", () => {
    const calls = { settle: 0 }
    const { layer } = setup({ wrap: flaky(Effect.interrupt, 1, calls) })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const fiber = yield* Effect.fork(Effect.flatMap(Settlements, (s) =>
        s.markSettled(sale, { success: true, transaction: "0xpaid", network: sale.network, payer: null, errorReason: null })))
      yield* TestClock.adjust("1 minute")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
      expect(calls.settle).toBe(1)
      expect((yield* stored(sale)).status).toBe("pending")
    }).pipe(Effect.provide(layer))
  })

  it.effect("retries a failed sale's write too, and it lands once", () => {
    const calls = { markFailed: 0 }
    const wrap = (ledger: Ledger): Ledger => ({
      ...ledger,
      markFailed: (id, reason) => Effect.suspend(() => ++calls.markFailed === 1 ? outage("connection reset") : ledger.markFailed(id, reason))
    })
    const { layer } = setup({ wrap })
    return Effect.gen(function*() {
      const sale = yield* pendingSale()
      const before = yield* counted(salesFailed, LIVE_BASE)
      const fiber = yield* Effect.fork(Effect.flatMap(Settlements, (s) => s.markFailed(sale, TRANSACTION_FAILED)))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toMatchObject({ status: "failed", failureReason: TRANSACTION_FAILED })
      expect(yield* stored(sale)).toMatchObject({ status: "failed", failureReason: TRANSACTION_FAILED })
      expect(calls.markFailed).toBe(2)
      expect(yield* counted(salesFailed, LIVE_BASE)).toBe(before + 1)
    }).pipe(Effect.provide(layer))
  })
})

describe("Settlements: tracing", () => {
  it.effect("names its spans Settlements.resolve, .markSettled and .markFailed (what an operator's tracer shows of a sale's end)", () => {
    const seen: Record<string, ReadonlyArray<string>> = {}
    const record = (key: string) => Effect.map(spanNames, (names) => void (seen[key] = names))
    const { layer } = setup({
      live: { status: () => Effect.as(record("status"), UNKNOWN) },
      wrap: (ledger) => ({
        ...ledger,
        settle: (sale, event) => Effect.zipRight(record("settle"), ledger.settle(sale, event)),
        markFailed: (id, reason) => Effect.zipRight(record("markFailed"), ledger.markFailed(id, reason))
      })
    })
    return Effect.gen(function*() {
      const settlements = yield* Settlements
      const sale = yield* pendingSale()
      yield* settlements.resolve(sale)
      yield* settlements.markSettled(sale, { success: true, transaction: "0xpaid", network: sale.network, payer: null, errorReason: null })
      yield* settlements.markFailed(yield* pendingSale(), "not_settled_before_expiry")
      expect(seen["status"]?.[0]).toBe("Settlements.resolve")
      expect(seen["settle"]?.[0]).toBe("Settlements.markSettled")
      expect(seen["markFailed"]?.[0]).toBe("Settlements.markFailed")
    }).pipe(Effect.provide(layer))
  })
})

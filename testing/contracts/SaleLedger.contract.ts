import { describe, expect } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Option } from "effect"
import { AccountId, ListingId, SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { Outbox } from "../../ports/Outbox.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { anEvent, aSale, at, BEYOND_DOUBLE, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const anAccountId = () => AccountId.make(`acct_${unique()}`)

/** The sale as `settle` is given it: settled, with its transaction. */
const settledOf = (sale: Sale, fields: Partial<ConstructorParameters<typeof Sale>[0]> = {}) =>
  new Sale({ ...sale, status: "settled", transaction: `0x${unique()}`, settledAt: at("2024-03-01T10:00:05.789Z"), ...fields })

/**
 * Events queued here are due, and the Outbox contract's `claimDue` sees every account's events: a test that
 * queues some cancels its account's pending events when done, pass or fail.
 */
const isolated = <A, E, R>(accountId: AccountId, test: Effect.Effect<A, E, R>) =>
  Effect.ensuring(test, Effect.orDie(Effect.flatMap(Outbox, (outbox) => outbox.cancelPending(accountId))))

/** The store refuses the write: a `StorageError` (SQL: the constraint) or a defect (memory). */
const expectRefused = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    const refused = Exit.isFailure(exit) &&
      (Cause.isDie(exit.cause) || Cause.failures(exit.cause).pipe(Chunk.some((e) => (e as { _tag?: unknown })._tag === "StorageError")))
    expect(refused, String(exit)).toBe(true)
  })

/** Follows `nextCursor` to the end; fails the test if the pages never end. */
const allPages = (accountId: AccountId, limit: number, livemode?: boolean) =>
  Effect.gen(function*() {
    const ledger = yield* SaleLedger
    const pages: Array<ReadonlyArray<Sale>> = []
    let cursor: string | undefined
    do {
      const page = yield* ledger.listByAccount(accountId, {
        limit,
        ...(cursor === undefined ? {} : { cursor }),
        ...(livemode === undefined ? {} : { livemode })
      })
      pages.push(page.sales)
      cursor = page.nextCursor ?? undefined
      expect(pages.length).toBeLessThan(20)
    } while (cursor !== undefined)
    return pages
  })

/** The SaleLedger port's guarantees, for any adapter. */
export const SaleLedgerContract = (it: ContractIt<SaleLedger | Outbox>, _backend: Backend) =>
  describe("SaleLedger", () => {
    it.effect("records a pending sale and finds it by id and by payment key, amount exact", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = aSale({ amount: BEYOND_DOUBLE, accountId: null, commitSha: null })
        expect(yield* ledger.recordPending(sale)).toStrictEqual({ sale, created: true })
        expect(yield* ledger.findById(sale.id)).toStrictEqual(Option.some(sale))
        expect(yield* ledger.findByPaymentKey(sale.paymentKey)).toStrictEqual(Option.some(sale))
        expect(Option.getOrThrow(yield* ledger.findById(sale.id)).amount).toBe(9_007_199_254_740_993n)
        expect(yield* ledger.findById(SaleId.make(`sale_${unique()}`))).toStrictEqual(Option.none())
        expect(yield* ledger.findByPaymentKey(`nonce-${unique()}`)).toStrictEqual(Option.none())
      }))

    it.effect("returns the recorded sale when the same payment is recorded again", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const first = aSale()
        yield* ledger.recordPending(first)
        const again = aSale({ paymentKey: first.paymentKey, payer: "someone else" })
        expect(yield* ledger.recordPending(again)).toStrictEqual({ sale: first, created: false })
        expect(yield* ledger.findById(again.id)).toStrictEqual(Option.none())
      }))

    it.effect("makes exactly one sale of 50 concurrent recordings of one payment", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const accountId = anAccountId()
        const paymentKey = `solana:devnet:${unique()}`
        const attempts = Array.from({ length: 50 }, () => aSale({ accountId, paymentKey }))
        const results = yield* Effect.forEach(attempts, (s) => ledger.recordPending(s), { concurrency: "unbounded" })
        expect(results.filter((r) => r.created)).toHaveLength(1)
        const winner = results.find((r) => r.created)!.sale
        expect(new Set(results.map((r) => r.sale.id))).toStrictEqual(new Set([winner.id]))
        const page = yield* ledger.listByAccount(accountId, { limit: 100 })
        expect(page.sales).toStrictEqual([winner])
        expect(yield* ledger.findByPaymentKey(paymentKey)).toStrictEqual(Option.some(winner))
      }))

    it.effect("only a pending sale moves: marked failed once, never after it settled, never settled after it failed", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const failing = aSale()
        yield* ledger.recordPending(failing)
        expect(yield* ledger.markFailed(failing.id, "insufficient_funds")).toBe(true)
        const failed = new Sale({ ...failing, status: "failed", failureReason: "insufficient_funds" })
        expect(yield* ledger.findByPaymentKey(failing.paymentKey)).toStrictEqual(Option.some(failed))
        expect(yield* ledger.markFailed(failing.id, "other")).toBe(false)
        expect(yield* ledger.settle(settledOf(failing), Option.none())).toBe(false)
        expect(yield* ledger.findById(failing.id)).toStrictEqual(Option.some(failed))

        const settling = aSale()
        yield* ledger.recordPending(settling)
        const settled = settledOf(settling)
        expect(yield* ledger.settle(settled, Option.none())).toBe(true)
        expect(yield* ledger.markFailed(settling.id, "late")).toBe(false)
        expect(yield* ledger.findById(settling.id)).toStrictEqual(Option.some(settled))
        expect(yield* ledger.markFailed(SaleId.make(`sale_${unique()}`), "unknown")).toBe(false)
      }))

    it.effect("notes a facilitator's refusal on a pending sale, which stays pending (and still settles or fails); never on a settled or failed one", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const refused = aSale()
        yield* ledger.recordPending(refused)
        expect(yield* ledger.noteRefusal(refused.id, "insufficient_funds")).toBe(true)
        const noted = new Sale({ ...refused, failureReason: "insufficient_funds" })
        expect(yield* ledger.findById(refused.id)).toStrictEqual(Option.some(noted))
        expect(yield* ledger.findByPaymentKey(refused.paymentKey)).toStrictEqual(Option.some(noted))
        // Still pending: the reconciler's list holds it, and it can settle (the refusal cleared by the settled sale).
        expect((yield* ledger.listPending({ createdBefore: at("2100-01-01T00:00:00.000Z"), limit: 10_000 })).map((s) => s.id)).toContain(refused.id)
        const settled = settledOf(refused)
        expect(yield* ledger.settle(settled, Option.none())).toBe(true)
        expect(yield* ledger.findById(refused.id)).toStrictEqual(Option.some(settled))
        expect(yield* ledger.noteRefusal(refused.id, "late")).toBe(false)
        expect(yield* ledger.findById(refused.id)).toStrictEqual(Option.some(settled))

        const failing = aSale()
        yield* ledger.recordPending(failing)
        expect(yield* ledger.noteRefusal(failing.id, "insufficient_funds")).toBe(true)
        expect(yield* ledger.markFailed(failing.id, "not_settled_before_expiry")).toBe(true)
        expect(yield* ledger.noteRefusal(failing.id, "other")).toBe(false)
        expect(yield* ledger.findById(failing.id)).toStrictEqual(Option.some(new Sale({ ...failing, status: "failed", failureReason: "not_settled_before_expiry" })))
        expect(yield* ledger.noteRefusal(SaleId.make(`sale_${unique()}`), "unknown")).toBe(false)
      }))

    it.effect("finds a sale by (network, payer, payment-id digest); a second sale with the same triple is refused", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const digest = `pid_${unique()}`
        const sale = aSale({ paymentIdDigest: digest, settleBy: at("2024-03-01T10:05:00.000Z") })
        yield* ledger.recordPending(sale)
        expect(yield* ledger.findByPaymentId(sale.network, sale.payer, digest)).toStrictEqual(Option.some(sale))
        expect(yield* ledger.findByPaymentId(sale.network, "0x2222222222222222222222222222222222222222", digest)).toStrictEqual(Option.none())
        expect(yield* ledger.findByPaymentId("eip155:84532", sale.payer, digest)).toStrictEqual(Option.none())
        // Another payer may use the same id: ids are the payer's own.
        const other = aSale({ paymentIdDigest: digest, payer: "0x2222222222222222222222222222222222222222" })
        expect((yield* ledger.recordPending(other)).created).toBe(true)
        yield* expectRefused(ledger.recordPending(aSale({ paymentIdDigest: digest })))
        expect(yield* ledger.findByPaymentId(sale.network, sale.payer, digest)).toStrictEqual(Option.some(sale))
      }))

    it.effect("finds a wallet's newest settled sale of a listing: EVM payers in any case, Solana payers exactly, by mode and chain", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const listingId = ListingId.make(`lst_${unique()}`)
        const evm = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
        const sol = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
        const settle = (sale: Sale, settledAt: string) =>
          Effect.gen(function*() {
            yield* ledger.recordPending(sale)
            const settled = settledOf(sale, { settledAt: at(settledAt) })
            expect(yield* ledger.settle(settled, Option.none())).toBe(true)
            return settled
          })
        const older = yield* settle(aSale({ listingId, payer: evm, commitSha: "a".repeat(40) }), "2024-03-01T10:00:00.000Z")
        const newer = yield* settle(aSale({ listingId, payer: evm, commitSha: "b".repeat(40) }), "2024-03-02T10:00:00.000Z")
        // Neither a pending nor a failed sale, a test sale or another listing's sale is a purchase to re-download.
        yield* ledger.recordPending(aSale({ listingId, payer: evm, createdAt: at("2024-03-03T10:00:00.000Z") }))
        const failed = aSale({ listingId, payer: evm })
        yield* ledger.recordPending(failed)
        expect(yield* ledger.markFailed(failed.id, "insufficient_funds")).toBe(true)
        const testSale = yield* settle(aSale({ listingId, payer: evm, livemode: false, network: "eip155:84532" }), "2024-03-04T10:00:00.000Z")
        yield* settle(aSale({ payer: evm }), "2024-03-05T10:00:00.000Z")
        const solana = yield* settle(
          aSale({ listingId, payer: sol, chain: "solana", network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" }),
          "2024-03-01T11:00:00.000Z"
        )

        const find = (payer: string, fields: { livemode?: boolean; chain?: "base" | "solana" } = {}) =>
          ledger.findSettledByPayer({ listingId, livemode: fields.livemode ?? true, chain: fields.chain ?? "base", payer })
        expect(yield* find(evm)).toStrictEqual(Option.some(newer))
        expect(yield* find(evm.toLowerCase())).toStrictEqual(Option.some(newer))
        expect(yield* find(evm.toUpperCase().replace("0X", "0x"))).toStrictEqual(Option.some(newer))
        expect(yield* find(evm, { livemode: false })).toStrictEqual(Option.some(testSale))
        expect(yield* find(evm, { chain: "solana" })).toStrictEqual(Option.none())
        expect(yield* find("0x2222222222222222222222222222222222222222")).toStrictEqual(Option.none())
        expect(yield* find(sol, { chain: "solana" })).toStrictEqual(Option.some(solana))
        // Base58 is case-sensitive: another case is another key.
        expect(yield* find(sol.toLowerCase(), { chain: "solana" })).toStrictEqual(Option.none())
        expect(yield* find(sol.toUpperCase(), { chain: "solana" })).toStrictEqual(Option.none())
        expect(yield* ledger.findSettledByPayer({ listingId: ListingId.make(`lst_${unique()}`), livemode: true, chain: "base", payer: evm }))
          .toStrictEqual(Option.none())
        expect(older.commitSha).not.toBe(newer.commitSha)
      }))

    it.effect("lists pending sales created before a moment, oldest first", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        // Far in the past, so sales of the other tests (2024) come after these in the list.
        const old = [aSale({ createdAt: at("2001-01-01T00:00:02.000Z") }), aSale({ createdAt: at("2001-01-01T00:00:01.000Z") })]
        const settledOld = aSale({ createdAt: at("2001-01-01T00:00:00.000Z") })
        const recent = aSale({ createdAt: at("2001-01-01T00:00:09.000Z") })
        for (const s of [...old, settledOld, recent]) yield* ledger.recordPending(s)
        yield* ledger.settle(settledOf(settledOld), Option.none())
        const listed = yield* ledger.listPending({ createdBefore: at("2001-01-01T00:00:05.000Z"), limit: 10 })
        expect(listed.map((s) => s.id)).toStrictEqual([old[1]!.id, old[0]!.id])
        expect(yield* ledger.listPending({ createdBefore: at("2001-01-01T00:00:05.000Z"), limit: 1 })).toHaveLength(1)
        // Page by page: after a position, the ones that follow it (same time: by id).
        const first = (yield* ledger.listPending({ createdBefore: at("2001-01-01T00:00:05.000Z"), limit: 1 }))[0]!
        const next = yield* ledger.listPending({
          createdBefore: at("2001-01-01T00:00:05.000Z"),
          limit: 10,
          after: { createdAt: first.createdAt, id: first.id }
        })
        expect(next.map((s) => s.id)).toStrictEqual([old[0]!.id])
        const twins = [aSale({ createdAt: at("2001-01-01T00:00:03.000Z") }), aSale({ createdAt: at("2001-01-01T00:00:03.000Z") })]
          .sort((a, b) => (a.id < b.id ? -1 : 1))
        for (const t of twins) yield* ledger.recordPending(t)
        const afterTwin = yield* ledger.listPending({
          createdBefore: at("2001-01-01T00:00:05.000Z"),
          limit: 10,
          after: { createdAt: twins[0]!.createdAt, id: twins[0]!.id }
        })
        expect(afterTwin.map((s) => s.id)).toStrictEqual([twins[1]!.id])
      }))

    it.effect("settles a sale and queues its event with it; without an event it queues none", () => {
      const accountId = anAccountId()
      return isolated(accountId, Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const outbox = yield* Outbox
        const sale = aSale({ accountId, amount: BEYOND_DOUBLE })
        yield* ledger.recordPending(sale)
        const settled = settledOf(sale, { payer: "0x2222222222222222222222222222222222222222" })
        const event = anEvent({ accountId, saleId: sale.id, body: "{\"n\":1,\"é\":\"✓\"}" })
        yield* ledger.settle(settled, Option.some(event))
        expect(yield* ledger.findById(sale.id)).toStrictEqual(Option.some(settled))
        expect(yield* outbox.findById(event.id)).toStrictEqual(Option.some(event))
        expect(yield* outbox.findBySale(sale.id)).toStrictEqual([event])

        const quiet = aSale({ accountId })
        yield* ledger.recordPending(quiet)
        const quietSettled = settledOf(quiet)
        yield* ledger.settle(quietSettled, Option.none())
        expect(yield* ledger.findByPaymentKey(quiet.paymentKey)).toStrictEqual(Option.some(quietSettled))
        expect(yield* outbox.findBySale(quiet.id)).toStrictEqual([])
      }))
    })

    it.effect("settling an unknown sale writes nothing, not even its event", () => {
      const accountId = anAccountId()
      return isolated(accountId, Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const outbox = yield* Outbox
        const stranger = aSale({ accountId })
        const event = anEvent({ accountId, saleId: stranger.id })
        yield* ledger.settle(settledOf(stranger), Option.some(event))
        expect(yield* ledger.findById(stranger.id)).toStrictEqual(Option.none())
        expect(yield* outbox.findById(event.id)).toStrictEqual(Option.none())
      }))
    })

    it.effect("a repeated settle writes nothing and queues no second event", () => {
      const accountId = anAccountId()
      return isolated(accountId, Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const outbox = yield* Outbox
        const sale = aSale({ accountId })
        yield* ledger.recordPending(sale)
        const settled = settledOf(sale)
        const event = anEvent({ accountId, saleId: sale.id })
        expect(yield* ledger.settle(settled, Option.some(event))).toBe(true)
        // The same call again, as a retry after an unseen success makes it; or another settler's own event.
        expect(yield* ledger.settle(settled, Option.some(event))).toBe(false)
        expect(yield* ledger.settle(settled, Option.some(anEvent({ accountId, saleId: sale.id })))).toBe(false)
        expect(yield* ledger.findById(sale.id)).toStrictEqual(Option.some(settled))
        expect(yield* outbox.findBySale(sale.id)).toStrictEqual([event])
        // The event's failure undoes the sale's write too: another sale stays pending.
        const other = aSale({ accountId })
        yield* ledger.recordPending(other)
        yield* expectRefused(ledger.settle(settledOf(other), Option.some(anEvent({ id: event.id, accountId, saleId: other.id }))))
        expect(yield* ledger.findById(other.id)).toStrictEqual(Option.some(other))
        expect(yield* outbox.findBySale(other.id)).toStrictEqual([])
        expect(yield* outbox.findById(event.id)).toStrictEqual(Option.some(event))
      }))
    })

    it.effect("a settle whose sale cannot be written (its payment key is another sale's) fails and queues nothing", () => {
      const accountId = anAccountId()
      return isolated(accountId, Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const outbox = yield* Outbox
        const first = aSale({ accountId })
        const second = aSale({ accountId })
        yield* ledger.recordPending(first)
        yield* ledger.recordPending(second)
        const event = anEvent({ accountId, saleId: second.id })
        yield* expectRefused(ledger.settle(settledOf(second, { paymentKey: first.paymentKey }), Option.some(event)))
        expect(yield* ledger.findById(second.id)).toStrictEqual(Option.some(second))
        expect(yield* ledger.findByPaymentKey(first.paymentKey)).toStrictEqual(Option.some(first))
        expect(yield* outbox.findById(event.id)).toStrictEqual(Option.none())
      }))
    })

    it.effect("lists an account's sales newest first through cursor pages, ties broken by id", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const accountId = anAccountId()
        const times = ["2024-01-01T00:00:00.001Z", "2024-01-02T00:00:00.000Z", "2024-01-02T00:00:00.000Z",
          "2024-01-02T00:00:00.000Z", "2024-01-03T00:00:00.000Z", "2024-01-04T00:00:00.000Z", "2024-01-05T00:00:00.000Z"]
        const sales = times.map((t, i) => aSale({ accountId, id: SaleId.make(`sale_${i}_${unique()}`), createdAt: at(t) }))
        for (const sale of [...sales].reverse()) yield* ledger.recordPending(sale)
        yield* ledger.recordPending(aSale({ accountId: anAccountId() }))
        const expected = [...sales].sort((a, b) =>
          b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        const pages = yield* allPages(accountId, 3)
        expect(pages.map((p) => p.length)).toStrictEqual([3, 3, 1])
        expect(pages.flat()).toStrictEqual(expected)
        // A page that ends exactly at the last sale says so: no empty page follows.
        expect((yield* allPages(accountId, 7)).map((p) => p.length)).toStrictEqual([7])
        expect((yield* allPages(accountId, 100)).flat()).toStrictEqual(expected)
      }))

    it.effect("filters by livemode, also across pages", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const accountId = anAccountId()
        const sales = Array.from({ length: 6 }, (_, i) =>
          aSale({ accountId, livemode: i % 2 === 0, createdAt: new Date(Date.UTC(2024, 0, 1 + i)) }))
        for (const sale of sales) yield* ledger.recordPending(sale)
        const newestFirst = [...sales].reverse()
        expect((yield* allPages(accountId, 2, true)).flat()).toStrictEqual(newestFirst.filter((s) => s.livemode))
        expect((yield* allPages(accountId, 2, false)).flat()).toStrictEqual(newestFirst.filter((s) => !s.livemode))
        expect((yield* allPages(accountId, 4)).flat()).toStrictEqual(newestFirst)
      }))

    it.effect("treats an unreadable cursor as the start, without failing", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const accountId = anAccountId()
        const sale = aSale({ accountId })
        yield* ledger.recordPending(sale)
        const page = yield* ledger.listByAccount(accountId, { limit: 10, cursor: "not a cursor ☃" })
        expect(page).toStrictEqual({ sales: [sale], nextCursor: null })
        expect(yield* ledger.listByAccount(anAccountId(), { limit: 10 })).toStrictEqual({ sales: [], nextCursor: null })
      }))
  })

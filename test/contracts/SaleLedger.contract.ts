import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AccountId, SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aSale, at, BEYOND_DOUBLE, unique } from "../support/fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const anAccountId = () => AccountId.make(`acct_${unique()}`)

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
export const SaleLedgerContract = (it: ContractIt<SaleLedger>, _backend: Backend) =>
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

    it.effect("updates a sale once it settles or fails", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = aSale()
        yield* ledger.recordPending(sale)
        const settled = new Sale({
          ...sale,
          status: "settled",
          transaction: "0xabc123",
          settledAt: at("2024-03-01T10:00:05.789Z")
        })
        yield* ledger.update(settled)
        expect(yield* ledger.findById(sale.id)).toStrictEqual(Option.some(settled))
        const failed = new Sale({ ...sale, status: "failed", failureReason: "insufficient_funds" })
        yield* ledger.update(failed)
        expect(yield* ledger.findByPaymentKey(sale.paymentKey)).toStrictEqual(Option.some(failed))
      }))

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

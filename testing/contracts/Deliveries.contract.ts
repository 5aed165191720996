import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Delivery } from "../../domain/Delivery.js"
import { DeliveryId, SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aSale, at, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

/** A settled sale on the ledger, sold with a 30-day update window. */
const settledSale = Effect.gen(function*() {
  const ledger = yield* SaleLedger
  const pending = aSale({ updatesDays: 30 })
  yield* ledger.recordPending(pending)
  const settled = new Sale({ ...pending, status: "settled", transaction: `0x${unique()}`, settledAt: at("2024-03-01T10:00:05.789Z") })
  expect(yield* ledger.settle(settled, Option.none())).toBe(true)
  return settled
})

const aDelivery = (saleId: SaleId, commitSha: string, deliveredAt = at("2024-03-02T08:00:00.123Z")) =>
  new Delivery({ id: DeliveryId.make(`dlv_${unique()}`), saleId, commitSha, deliveredAt })

const COMMIT_A = "a".repeat(40)
const COMMIT_B = "b".repeat(40)

/**
 * The SaleLedger's update deliveries (issue 30), for any adapter: one per sale and commit, found by id, listed
 * per sale oldest first; the sale keeps the update window it was sold with.
 */
export const SaleLedgerDeliveriesContract = (it: ContractIt<SaleLedger>, _backend: Backend) =>
  describe("SaleLedger deliveries", () => {
    it.effect("a sale keeps its update window through record and settle", () =>
      Effect.gen(function*() {
        const sale = yield* settledSale
        expect(Option.getOrThrow(yield* (yield* SaleLedger).findById(sale.id)).updatesDays).toBe(30)
      }))

    it.effect("records a delivery once per (sale, commit): the second record answers the first, created false", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = yield* settledSale
        const first = aDelivery(sale.id, COMMIT_A)
        expect(yield* ledger.recordDelivery(first)).toStrictEqual({ delivery: first, created: true })
        const again = aDelivery(sale.id, COMMIT_A, at("2024-03-03T08:00:00.000Z"))
        expect(yield* ledger.recordDelivery(again)).toStrictEqual({ delivery: first, created: false })
        expect(yield* ledger.findDelivery(first.id)).toStrictEqual(Option.some(first))
        expect(yield* ledger.findDelivery(again.id)).toStrictEqual(Option.none())
      }))

    it.effect("concurrent records of the same update: exactly one created, all answer the same delivery", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = yield* settledSale
        const results = yield* Effect.all(Array.from({ length: 6 }, () => ledger.recordDelivery(aDelivery(sale.id, COMMIT_B))), { concurrency: "unbounded" })
        expect(results.filter((r) => r.created)).toHaveLength(1)
        expect(new Set(results.map((r) => r.delivery.id)).size).toBe(1)
      }))

    it.effect("lists the deliveries of the given sales, oldest first per sale, and none of others", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const one = yield* settledSale
        const two = yield* settledSale
        const other = yield* settledSale
        const later = aDelivery(one.id, COMMIT_B, at("2024-03-05T00:00:00.000Z"))
        const earlier = aDelivery(one.id, COMMIT_A, at("2024-03-04T00:00:00.000Z"))
        const ofTwo = aDelivery(two.id, COMMIT_A)
        for (const d of [later, earlier, ofTwo, aDelivery(other.id, COMMIT_A)]) yield* ledger.recordDelivery(d)
        const listed = yield* ledger.listDeliveries([one.id, two.id])
        expect(listed.filter((d) => d.saleId === one.id)).toStrictEqual([earlier, later])
        expect(listed.filter((d) => d.saleId === two.id)).toStrictEqual([ofTwo])
        expect(listed).toHaveLength(3)
        expect(yield* ledger.listDeliveries([])).toStrictEqual([])
        expect(yield* ledger.findDelivery(DeliveryId.make(`dlv_${unique()}`))).toStrictEqual(Option.none())
      }))
  })

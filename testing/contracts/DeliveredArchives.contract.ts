import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Delivery } from "../../domain/Delivery.js"
import { DeliveryId, SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aSale, at, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

/** A settled sale on the ledger. */
const settledSale = Effect.gen(function*() {
  const ledger = yield* SaleLedger
  const pending = aSale({ updatesDays: 30 })
  yield* ledger.recordPending(pending)
  const settled = new Sale({ ...pending, status: "settled", transaction: `0x${unique()}`, settledAt: at("2024-03-01T10:00:05.789Z") })
  expect(yield* ledger.settle(settled, Option.none())).toBe(true)
  return settled
})

const digestOf = (fill: string, size: number) => ({ sha256: fill.repeat(64), size })

/**
 * The SaleLedger's delivered archives (issue 39), for any adapter: the archive each receipt delivered — the sale's
 * own, or an update delivery's — recorded once (the first record stays) and read back by the receipt's id, so a
 * receipt's provenance needs nothing but the ledger.
 */
export const SaleLedgerDeliveredArchivesContract = (it: ContractIt<SaleLedger>, _backend: Backend) =>
  describe("SaleLedger delivered archives", () => {
    it.effect("a sale's archive: none before it is recorded; recorded once, the first record stays", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = yield* settledSale
        expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.none())
        expect(yield* ledger.recordDigest({ saleId: sale.id, deliveryId: null, digest: digestOf("a", 70_000) })).toBe(true)
        expect(yield* ledger.recordDigest({ saleId: sale.id, deliveryId: null, digest: digestOf("b", 1) })).toBe(false)
        expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.some(digestOf("a", 70_000)))
      }))

    it.effect("an update delivery's archive is its own: the sale's is not it, and sizes past 2 GiB are exact", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = yield* settledSale
        const other = yield* settledSale
        const { delivery } = yield* ledger.recordDelivery(
          new Delivery({ id: DeliveryId.make(`dlv_${unique()}`), saleId: sale.id, commitSha: "c".repeat(40), deliveredAt: at("2024-03-02T08:00:00.123Z") })
        )
        const big = digestOf("c", 5 * 1024 * 1024 * 1024 + 3)
        expect(yield* ledger.recordDigest({ saleId: sale.id, deliveryId: delivery.id, digest: big })).toBe(true)
        expect(yield* ledger.findDigest(delivery.id)).toStrictEqual(Option.some(big))
        expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.none())
        expect(yield* ledger.recordDigest({ saleId: sale.id, deliveryId: null, digest: digestOf("d", 10) })).toBe(true)
        expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.some(digestOf("d", 10)))
        expect(yield* ledger.findDigest(delivery.id)).toStrictEqual(Option.some(big))
        expect(yield* ledger.findDigest(other.id)).toStrictEqual(Option.none())
        expect(yield* ledger.findDigest(SaleId.make(`sale_${unique()}`))).toStrictEqual(Option.none())
      }))

    it.effect("concurrent records of one receipt: exactly one recorded, and that one is read back", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const sale = yield* settledSale
        const fills = ["1", "2", "3", "4", "5", "6"]
        const results = yield* Effect.all(
          fills.map((f) => Effect.map(ledger.recordDigest({ saleId: sale.id, deliveryId: null, digest: digestOf(f, 1) }), (created) => ({ f, created }))),
          { concurrency: "unbounded" }
        )
        const winners = results.filter((r) => r.created)
        expect(winners).toHaveLength(1)
        expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.some(digestOf(winners[0]!.f, 1)))
      }))
  })

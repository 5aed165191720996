/*
 * The reconciler walks the pending sales page by page: sales it cannot resolve yet (the chain cannot tell, or
 * not yet) never hide newer ones, however many there are. Memory storage; a facilitator whose chain reader
 * answers per sale.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import type { SaleId } from "../../domain/Ids.js"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { type Facilitator, FacilitatorError, PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aSale, at } from "../support/fixtures.js"
import { ReceiptsOn } from "../usecases/support.js"

/** What the chain knows: the sales whose payment moved; every other one is "cannot tell". */
const movedOnChain = new Set<SaleId>()

const refuse = () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "not used here" }))
const live: Facilitator = {
  verify: refuse,
  settle: refuse,
  status: (sale) =>
    Effect.succeed(movedOnChain.has(sale.id) ? { _tag: "Settled", transaction: `0x${sale.id}` } : { _tag: "Unknown", reason: "no answer" })
}

const App = Reconciler.Default.pipe(
  Layer.provideMerge(Settlements.Default),
  Layer.provideMerge(Layer.mergeAll(
    StorageMemory,
    SecretBoxTest,
    ReceiptsOn,
    Layer.succeed(PaymentFacilitator, { live: Option.some(live), test: live, extra: () => Effect.succeed({}) })
  ))
)

describe("Reconciler", () => {
  layer(App, { excludeTestServices: true })((it) => {
    it.effect("goes on after the last sale it looked at, so stuck sales never hide a newer one that can be settled", () =>
      Effect.gen(function*() {
        const ledger = yield* SaleLedger
        const reconciler = yield* Reconciler
        // Five stuck sales, then the one whose payment moved: newest of all.
        const stuck = [1, 2, 3, 4, 5].map((i) => aSale({ accountId: null, createdAt: at(`2024-01-01T00:00:0${i}.000Z`) }))
        const resolvable = aSale({ accountId: null, createdAt: at("2024-01-01T00:00:09.000Z") })
        for (const sale of [...stuck, resolvable]) yield* ledger.recordPending(sale)
        movedOnChain.add(resolvable.id)

        const pass = reconciler.reconcilePending({ grace: Duration.zero, limit: 2 })
        expect(yield* pass).toMatchObject({ checked: 2, pending: 2, settled: 0 })
        expect(yield* pass).toMatchObject({ checked: 2, pending: 2, settled: 0 })
        expect(yield* pass).toMatchObject({ checked: 2, pending: 1, settled: 1 })
        expect(Option.getOrThrow(yield* ledger.findById(resolvable.id))).toMatchObject({ status: "settled", transaction: `0x${resolvable.id}` })
        // The end reached, the next pass starts over from the oldest.
        expect(yield* pass).toMatchObject({ checked: 2, pending: 2 })
        const listed = yield* ledger.listPending({ createdBefore: at("2025-01-01T00:00:00.000Z"), limit: 100 })
        expect(listed.map((s) => s.id)).toStrictEqual(stuck.map((s) => s.id))
      }))
  })
})

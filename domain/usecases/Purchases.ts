import { Effect } from "effect"
import { ReceiptExpired } from "../Errors.js"
import { receiptExpired } from "../rules/Receipt.js"
import { ArchiveCuts } from "./ArchiveCuts.js"
import { HostTokens } from "./HostTokens.js"
import { purchaseDeps } from "./purchases/Deps.js"
import { makeGoods } from "./purchases/Goods.js"
import { makePay } from "./purchases/Pay.js"
import { makeProvenance } from "./purchases/Provenance.js"
import { makeQuoting } from "./purchases/Quote.js"
import { makeRecovery } from "./purchases/Recovery.js"
import { makeUpdates, type Receipted } from "./purchases/Updates.js"
import { now } from "../rules/Clock.js"

export type { Goods, Quote } from "./purchases/Types.js"
export type { Receipted } from "./purchases/Updates.js"
export { PAYMENT_ATTEMPTS_PER_MINUTE } from "./purchases/Pay.js"

/**
 * Buying: the current checkout, its 402 quote, paying (verify, pin the commit, record the sale, settle, deliver)
 * and re-downloading by receipt. Each operation lives in its own file under `purchases/` (quote, pay, goods, the
 * recovery of payments already on the ledger, and the messages a buyer reads); this service wires them.
 */
export class Purchases extends Effect.Service<Purchases>()("repomarket/Purchases", {
  dependencies: [HostTokens.Default, ArchiveCuts.Default],
  effect: Effect.gen(function*() {
    const deps = yield* purchaseDeps
    const quoting = makeQuoting(deps)
    const goods = makeGoods(deps)
    const updates = makeUpdates(deps, goods)
    const recovery = makeRecovery(deps, goods, updates)
    const pay = makePay(deps, quoting, goods, recovery)
    const goodsOf = goods.goodsOf
    const provenance = makeProvenance(deps, updates)

    /**
     * `GET /downloads/<token>`: the same commit again, for 7 days after settlement (an update delivery's token:
     * that update's commit, for 7 days after it was delivered). `admit` (the re-download limits) runs once the
     * link is known to be good and before the goods are made, so a refused request asks nothing of the code host.
     */
    const download = Effect.fn("Purchases.download")(function*<E = never, R = never>(
      token: string,
      admit: (receipted: Receipted) => Effect.Effect<void, E, R> = () => Effect.void
    ) {
      const receipted = yield* updates.receipted(token)
      const { sale, update } = receipted
      if (receiptExpired(update?.deliveredAt ?? sale.settledAt!, yield* now)) {
        const [owner, name] = sale.repo.split("/") as [string, string]
        const detail = update === null
          ? "This download link has expired (links last 7 days after payment)."
          : "This update's download link has expired (an update's link lasts 7 days after it was delivered); ask for the latest commit again with the purchase's receipt link + /latest while its update window is open."
        return yield* new ReceiptExpired({ page: deps.pageOf({ owner, name }), detail })
      }
      yield* admit(receipted)
      return yield* goodsOf(sale, goods.settlementOf(sale), undefined, undefined, update ?? undefined)
    })

    return {
      current: quoting.current,
      quote: quoting.quote,
      pay,
      download,
      goods: goodsOf,
      provenance,
      receipted: updates.receipted,
      updateEligible: updates.eligible,
      deliverLatest: updates.deliverLatest
    } as const
  })
}) {}

import { Effect, Option } from "effect"
import { NotFound, ReceiptExpired } from "../model/Errors.js"
import { parseReceipt, receiptExpired } from "../model/rules/Receipt.js"
import { HostTokens } from "./HostTokens.js"
import { purchaseDeps } from "./purchases/Deps.js"
import { makeGoods } from "./purchases/Goods.js"
import { makePay } from "./purchases/Pay.js"
import { makeProvenance } from "./purchases/Provenance.js"
import { makeQuoting } from "./purchases/Quote.js"
import { makeRecovery } from "./purchases/Recovery.js"
import { now } from "../model/rules/Tokens.js"

export type { Goods, Quote } from "./purchases/Types.js"
export { PAYMENT_ATTEMPTS_PER_MINUTE } from "./purchases/Pay.js"

/**
 * Buying: the current checkout, its 402 quote, paying (verify, pin the commit, record the sale, settle, deliver)
 * and re-downloading by receipt. Each operation lives in its own file under `purchases/` (quote, pay, goods, the
 * recovery of payments already on the ledger, and the messages a buyer reads); this service wires them.
 */
export class Purchases extends Effect.Service<Purchases>()("repomarket/Purchases", {
  dependencies: [HostTokens.Default],
  effect: Effect.gen(function*() {
    const deps = yield* purchaseDeps
    const quoting = makeQuoting(deps)
    const goods = makeGoods(deps)
    const recovery = makeRecovery(deps, goods)
    const pay = makePay(deps, quoting, goods, recovery)
    const goodsOf = goods.goodsOf
    const provenance = makeProvenance(deps, goods)

    /** `GET /downloads/<token>`: the same commit again, for 7 days after settlement. */
    const download = Effect.fn("Purchases.download")(function*(token: string) {
      const unknown = new NotFound({ detail: "No such download." })
      // A token that does not parse names no sale; only a settled sale (one with a settlement time) is goods.
      const sale = yield* Option.fromNullable(parseReceipt(token, deps.box.verifyMac)).pipe(
        Effect.flatMap(deps.ledger.findById),
        Effect.flatten,
        Effect.mapError(() => unknown)
      )
      const settledAt = yield* Option.fromNullable(sale.settledAt).pipe(
        Option.filter(() => sale.status === "settled"),
        Effect.mapError(() => unknown)
      )
      if (receiptExpired(settledAt, yield* now)) {
        const [owner, name] = sale.repo.split("/") as [string, string]
        return yield* new ReceiptExpired({ page: deps.pageOf({ owner, name }), detail: "This download link has expired (links last 7 days after payment)." })
      }
      return yield* goodsOf(sale, goods.settlementOf(sale))
    })

    return { current: quoting.current, quote: quoting.quote, pay, download, goods: goodsOf, provenance } as const
  })
}) {}

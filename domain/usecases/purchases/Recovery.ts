import { Effect, Option, Redacted, Schedule } from "effect"
import { PaymentIdConflict, PaymentRejected, SettlementFailed, SettlementPending } from "../../Errors.js"
import type { Listing } from "../../Listing.js"
import type { Sale } from "../../Sale.js"
import { matchesTerms } from "../../rules/Requirements.js"
import type { SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import type { PurchaseDeps } from "./Deps.js"
import type { makeGoods } from "./Goods.js"
import type { makeUpdates } from "./Updates.js"
import { ALREADY_USED, PAYMENT_ID_CONFLICT, refusedEarlierDetail, SETTLEMENT_PENDING } from "./Messages.js"

/** How long a second copy of a payment waits for a settle in flight before asking the chain (and answering 503). */
const SETTLING_WAIT = Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurUpTo("5 seconds"))

/**
 * A payment the ledger already holds: its buyer's retry (recognised by the payment-identifier id, checked to be
 * that purchase) gets the goods once settled; anyone else presenting it gets no goods, ever.
 */
export const makeRecovery = (
  { box, chains, ledger, settlements }: PurchaseDeps,
  { goodsOf, settlementOf }: ReturnType<typeof makeGoods>,
  updates: ReturnType<typeof makeUpdates>
) => {
  const settlementUnknown = new SettlementPending({ retryAfterSeconds: 10, detail: SETTLEMENT_PENDING })

  const idConflict = new PaymentIdConflict({ detail: PAYMENT_ID_CONFLICT })

  /**
   * A pending sale, given a moment: a settle in flight usually lands within it; then the chain (or the
   * facilitator) is asked. Answers the sale as it then stands, possibly still pending.
   */
  const settling = Effect.fnUntraced(function*(pending: Sale) {
    const sale = yield* Effect.flatten(ledger.findById(pending.id)).pipe(
      Effect.catchTag("NoSuchElementException", Effect.die),
      Effect.filterOrFail((s) => s.status !== "pending", () => "still_pending" as const),
      Effect.retry({ schedule: SETTLING_WAIT, while: (e) => e === "still_pending" }),
      Effect.catchIf((e) => e === "still_pending", () => Effect.succeed(pending))
    )
    return sale.status === "pending" ? yield* settlements.resolve(sale) : sale
  })

  /**
   * A sale as it stands for a payment presented again: a pending one given its moment (`settling`), except one
   * whose settle the facilitator already refused: no settle is in flight, so the chain is asked at once.
   */
  const standing = (existing: Sale) =>
    existing.status !== "pending" ? Effect.succeed(existing) : existing.failureReason !== null ? settlements.resolve(existing) : settling(existing)

  /** A refused payment whose authorization may still move (the chain shows nothing of it yet): refused again, with why. */
  const refusedEarlier = (sale: Sale, reason: string) =>
    new SettlementFailed({ reason, network: sale.network, payer: sale.payer, detail: refusedEarlierDetail(reason, sale.settleBy) })

  const failedEarlier = (sale: Sale) =>
    new SettlementFailed({ reason: sale.failureReason ?? "settlement_failed", network: sale.network, payer: sale.payer, detail: "This payment failed to settle earlier; it cannot be used again." })

  /**
   * A payment already on the ledger, presented without its buyer's payment-identifier id: it never settles
   * twice and never unlocks the goods (its every byte is public once settled). Settled → 402
   * `payment_already_used` naming the ways to recover; failed → its failure again; pending → 503 until known.
   */
  const alreadyPresented = Effect.fnUntraced(function*(existing: Sale) {
    const sale = yield* standing(existing)
    if (sale.status === "pending") return yield* (sale.failureReason === null ? settlementUnknown : refusedEarlier(sale, sale.failureReason))
    if (sale.status === "failed") return yield* failedEarlier(sale)
    return yield* new PaymentRejected({ reason: "payment_already_used", detail: ALREADY_USED })
  })

  /** A sale the buyer's retry names, once settled: pending is 503 until known, failed is its failure again. */
  const settledOf = Effect.fnUntraced(function*(existing: Sale) {
    const sale = yield* standing(existing)
    if (sale.status === "pending") return yield* (sale.failureReason === null ? settlementUnknown : refusedEarlier(sale, sale.failureReason))
    if (sale.status === "failed") return yield* failedEarlier(sale)
    return sale
  })

  /** A purchase retried with its buyer's id (already checked to be that purchase): its goods, once settled. */
  const recovered = (existing: Sale, held?: Listing) =>
    Effect.flatMap(settledOf(existing), (sale) => goodsOf(sale, settlementOf(sale), held))

  /**
   * The same retry asking for the listing's current commit: an update within the sale's window, or the refusal. An
   * update delivered this way spends the sale's and `client`'s re-download budgets like any receipt route.
   */
  const latestOf = (existing: Sale, client: string) =>
    Effect.flatMap(settledOf(existing), (sale) => Effect.flatMap(updates.eligible(sale), (listing) => updates.deliverLatest(sale, listing, client)))

  /** The keyed digest a payment-identifier id is stored as: a leaked ledger does not reveal ids. */
  const paymentIdDigest = (network: string, payer: string, id: Redacted.Redacted<string>) =>
    box.mac(`payment-id:${network}:${payer}:${Redacted.value(id)}`)

  /**
   * The buyer's retry of the purchase it made with this payment-identifier id: the payment must be signed by
   * the sale's payer, for the sale's terms, at the sale's checkout. The signature is checked here, with
   * no facilitator; its time window is not (a retry may come after the authorization lapsed). With `latest`, the
   * listing's current commit within the sale's update window instead of the commit paid for.
   */
  const retry = Effect.fnUntraced(function*(sale: Sale, id: string, livemode: boolean, payment: SubmittedPayment, latest: boolean, client: string) {
    if (sale.checkoutId !== id || sale.livemode !== livemode || payment.network !== sale.network) return yield* idConflict
    const claimed = Option.getOrNull(payment.accepted)
    if (claimed !== null && !matchesTerms(sale.chain, claimed, sale)) return yield* idConflict
    const terms = { network: sale.network, asset: sale.asset, amount: sale.amount, payTo: sale.payTo, extra: chains.facts(sale.chain, sale.livemode).extra }
    yield* chains.checkPayment(sale.chain, payment.payload, terms, Option.none()).pipe(Effect.mapError(() => idConflict))
    return yield* (latest ? latestOf(sale, client) : recovered(sale))
  })

  return { settlementUnknown, idConflict, alreadyPresented, recovered, latestOf, paymentIdDigest, retry } as const
}

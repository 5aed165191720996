import { Effect, Option } from "effect"
import { Delivery } from "../../Delivery.js"
import { NotFound, UpdateRefused } from "../../Errors.js"
import { type DeliveryId, IdPrefix, type SaleId } from "../../Ids.js"
import type { Listing } from "../../Listing.js"
import { updatesUntil } from "../../ReceiptClaims.js"
import type { Sale } from "../../Sale.js"
import { parseReceipt, receiptToken } from "../../rules/Receipt.js"
import { now } from "../../rules/Clock.js"
import { newId } from "../Minting.js"
import { SecretBox } from "../../../ports/SecretBox.js"
import { cannotDeliver } from "../HostErrors.js"
import type { PurchaseDeps } from "./Deps.js"
import type { makeGoods } from "./Goods.js"
import { spendRedownload } from "./ReceiptBudgets.js"

/** What a receipt token names: a settled sale, and the update delivery when the token is an update's own. */
export interface Receipted {
  /** The settled sale. */
  readonly sale: Sale
  /** The update delivery the token is of; null for the purchase's own receipt link. */
  readonly update: Delivery | null
}

/**
 * Updates after purchase (issue 30): within the update window a purchase was sold with (`Sale.updatesDays` days
 * after settlement), its buyer fetches the listing's current commit without paying again, as a new signed
 * delivery recorded on the ledger (one per sale and commit). Outside the window, or once the listing is taken
 * down, the request is refused with the reason, and the purchased commit stays the buyer's by its receipt link.
 */
export const makeUpdates = (
  { baseUrl, box, host, ledger, limiter, store, tokens }: PurchaseDeps,
  { goodsOf, settlementOf }: ReturnType<typeof makeGoods>
) => {
  const unknown = new NotFound({ detail: "No such download." })
  const found = <A, E>(lookup: Effect.Effect<Option.Option<A>, E>) =>
    Effect.flatMap(lookup, Option.match({ onNone: () => Effect.fail(unknown), onSome: Effect.succeed }))

  /**
   * The settled sale a receipt token names (the purchase's own token, or an update delivery's), unexpired or
   * not: a token that does not verify, an unknown id or an unsettled sale is 404 alike.
   */
  const receipted = Effect.fn("Purchases.receipted")(function*(token: string) {
    const id = parseReceipt(token, box.verifyMac)
    if (id === null) return yield* unknown
    const update = id.startsWith(IdPrefix.delivery) ? yield* found(ledger.findDelivery(id as DeliveryId)) : null
    const sale = yield* found(ledger.findById(update?.saleId ?? (id as SaleId)))
    if (sale.status !== "settled" || sale.settledAt === null) return yield* unknown
    return { sale, update } satisfies Receipted
  })

  /** The purchased commit's own download link: what a refusal leaves the buyer. */
  const purchaseLink = (sale: Sale) => `${baseUrl}/downloads/${receiptToken(sale.id, box.mac)}`

  /**
   * The listing whose current commit `sale` may have now, or the refusal that says why not. Reads the ledger's
   * copy of the window and the listing only: no code host call, no rate-limit budget, nothing recorded.
   */
  const eligible = Effect.fn("Purchases.updateEligible")(function*(sale: Sale) {
    const receipt = purchaseLink(sale)
    const keeps = `The commit you paid for (${(sale.commitSha ?? "unknown").slice(0, 12)}) stays yours at ${receipt}.`
    const refuse = (reason: UpdateRefused["reason"], why: string) => new UpdateRefused({ reason, receipt, detail: `${why} ${keeps}` })
    const until = updatesUntil(sale)
    if (until === null) {
      return yield* refuse("updates_not_included", "This purchase came with no updates: the listing offered none when it was paid for.")
    }
    if ((yield* now).getTime() > until.getTime()) {
      return yield* refuse(
        "updates_window_closed",
        `This purchase's updates ended at ${until.toISOString()} (${sale.updatesDays} day${sale.updatesDays === 1 ? "" : "s"} after payment); newer commits are not part of it.`
      )
    }
    const listing = Option.getOrNull(yield* store.findById(sale.listingId))
    if (listing === null || !listing.isLive) {
      return yield* refuse("listing_taken_down", "The seller took this listing down, so it gives no newer commits.")
    }
    return listing
  })

  /**
   * The listing's current commit for `sale` (already found eligible): the purchase's own goods when the head has
   * not moved, else the update delivery of the head, recorded once per commit, with its own receipt link,
   * signed receipt and provenance. A code host that cannot say is a 503, with nothing recorded.
   *
   * Counted first as a re-download of the sale (its hourly budget, and `client`'s when given: see
   * `spendRedownload`), before the code host is asked, whichever way the buyer came: `/latest` by a receipt link,
   * a wallet's proof, or the payment-identifier retry with `?updates=latest`. A refusal (429) costs no call.
   */
  const deliverLatest = Effect.fn("Purchases.deliverLatest")(function*(sale: Sale, listing: Listing, client: string | null = null) {
    yield* spendRedownload(limiter, sale.id, client)
    const token = yield* tokens.tokenOf(listing)
    const info = yield* host.repo(listing.repo, token).pipe(Effect.mapError(cannotDeliver))
    if (sale.commitSha !== null && info.headSha.toLowerCase() === sale.commitSha.toLowerCase()) {
      return yield* goodsOf(sale, settlementOf(sale), listing, token)
    }
    const id = yield* newId<DeliveryId>(IdPrefix.delivery).pipe(Effect.provideService(SecretBox, box))
    const { delivery } = yield* ledger.recordDelivery(new Delivery({ id, saleId: sale.id, commitSha: info.headSha, deliveredAt: yield* now }))
    return yield* goodsOf(sale, settlementOf(sale), listing, token, delivery)
  })

  return { receipted, eligible, deliverLatest } as const
}

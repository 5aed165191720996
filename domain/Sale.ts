import { Schema } from "effect"
import { AccountId, CheckoutId, ListingId, SaleId } from "./Ids.js"
import { AtomicAmount } from "./Money.js"
import { Chain } from "./Wallet.js"

/** A sale's state: `pending` before settlement is known, then `settled` or `failed`. */
export const SaleStatus = Schema.Literal("pending", "settled", "failed")
/** One of `SaleStatus`'s values. */
export type SaleStatus = typeof SaleStatus.Type

/**
 * One payment for one listing: the ledger of record. A sale is recorded as pending before settlement and
 * before any byte leaves; `paymentKey` identifies the payment itself (network + authorization nonce or
 * transaction), so the same payment presented twice can never make two sales.
 */
export class Sale extends Schema.Class<Sale>("Sale")({
  id: SaleId,
  paymentKey: Schema.String,
  listingId: ListingId,
  checkoutId: CheckoutId,
  accountId: Schema.NullOr(AccountId),
  /** `<owner>/<repo>` at the time of the sale. */
  repo: Schema.String,
  livemode: Schema.Boolean,
  chain: Chain,
  network: Schema.String,
  asset: Schema.String,
  amount: AtomicAmount,
  payTo: Schema.String,
  payer: Schema.String,
  /** The commit the buyer paid for, pinned before settlement. */
  commitSha: Schema.NullOr(Schema.String),
  transaction: Schema.NullOr(Schema.String),
  status: SaleStatus,
  failureReason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  settledAt: Schema.NullOr(Schema.DateFromSelf),
  /**
   * Keyed digest (the SecretBox MAC, hex) of the x402 `payment-identifier` id the buyer sent with this payment,
   * bound to network and payer, if any: a leaked ledger does not reveal ids. The id never goes on chain, so
   * together with a signature by the payer it tells the buyer from a chain observer.
   */
  paymentIdDigest: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /**
   * The last moment the payment can still settle on its chain (EVM: the authorization's `validBefore`). An
   * unsettled payment past it never settles: a sale whose settle outcome was unknown is then final, failed.
   */
  settleBy: Schema.optionalWith(Schema.NullOr(Schema.DateFromSelf), { default: () => null }),
  /**
   * The update window this purchase was sold with: for that many days after settlement the buyer may fetch the
   * listing's current commit again without paying (a new signed delivery). Copied from the listing when the
   * sale is recorded, so a seller who shortens the window later takes nothing from earlier buyers. 0 = none.
   */
  updatesDays: Schema.optionalWith(Schema.Int, { default: () => 0 })
}) {}

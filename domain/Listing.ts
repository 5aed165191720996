import { Schema } from "effect"
import { AccountId, CheckoutId, ListingId, RepoRef, SealedSecret } from "./Ids.js"
import { AtomicAmount } from "./Money.js"
import { Wallets } from "./Wallet.js"

/** Whether a listing is on sale (`live`) or was taken down by its owner. */
export const ListingStatus = Schema.Literal("live", "taken_down")
/** One of `ListingStatus`'s values. */
export type ListingStatus = typeof ListingStatus.Type

/** The longest update window a listing may offer, in days (about ten years). */
export const MAX_UPDATES_DAYS = 3650

/** What is wrong with a value that is not an update window, as a 400 names it on `updates_days`. */
export const updatesDaysProblem = `must be a whole number of days from 0 to ${MAX_UPDATES_DAYS}`

/** An update window in days: a whole number from 0 (no updates after purchase) to `MAX_UPDATES_DAYS`. */
export const UpdatesDays = Schema.Int.pipe(Schema.between(0, MAX_UPDATES_DAYS)).annotations({
  message: () => ({ message: updatesDaysProblem, override: true })
})

/**
 * A repository offered for sale. `payTo` holds the addresses the listing carries, one per chain: named on
 * the listing or resolved from the account default when its checkout was built; a carried address never
 * moves because an account default changed.
 */
export class Listing extends Schema.Class<Listing>("Listing")({
  id: ListingId,
  repo: RepoRef,
  /** null for an anonymous listing: it never falls back to an account's wallets. */
  accountId: Schema.NullOr(AccountId),
  hostUrl: Schema.String,
  isPrivate: Schema.Boolean,
  description: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  price: Schema.NullOr(AtomicAmount),
  payTo: Wallets,
  /** The listing's read-only code-host token, sealed by the SecretBox port; never shown. */
  hostPat: Schema.NullOr(SealedSecret),
  checkoutId: CheckoutId,
  status: ListingStatus,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  takenDownAt: Schema.NullOr(Schema.DateFromSelf),
  /**
   * The update window offered to buyers, in days: within that many days after a purchase settled, the buyer
   * may fetch the listing's current commit again without paying, as a new signed delivery. 0 (the default,
   * also for rows and objects from before the field) offers none. A buyer keeps the window offered when they
   * paid: it is fixed on the sale (`Sale.updatesDays`), so a later change here applies to later sales only.
   */
  updatesDays: Schema.optionalWith(UpdatesDays, { default: () => 0 })
}) {
  /** Whether the listing is on sale (not taken down). */
  get isLive(): boolean {
    return this.status === "live"
  }
}

/** Additional data that binds a sealed token to the listing it belongs to, so it cannot be moved to another. */
export const hostPatAad = (listing: { readonly id: ListingId }): string => `listing:${listing.id}:host_pat`

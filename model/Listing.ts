import { Schema } from "effect"
import { AccountId, CheckoutId, ListingId, RepoRef, SealedSecret } from "./Ids.js"
import { AtomicAmount } from "./Money.js"
import { Wallets } from "./Wallet.js"

/** Whether a listing is on sale (`live`) or was taken down by its owner. */
export const ListingStatus = Schema.Literal("live", "taken_down")
/** One of `ListingStatus`'s values. */
export type ListingStatus = typeof ListingStatus.Type

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
  takenDownAt: Schema.NullOr(Schema.DateFromSelf)
}) {
  /** Whether the listing is on sale (not taken down). */
  get isLive(): boolean {
    return this.status === "live"
  }
}

/** Additional data that binds a sealed token to the listing it belongs to, so it cannot be moved to another. */
export const hostPatAad = (listing: { readonly id: ListingId }): string => `listing:${listing.id}:host_pat`

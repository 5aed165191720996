import { Schema } from "effect"
import { CheckoutId, ListingId, RepoRef } from "./Ids.js"
import { AtomicAmount } from "./Money.js"
import { chainsOf, Wallets } from "./Wallet.js"
import type { Listing } from "./Listing.js"

/**
 * The terms a buyer pays against: a snapshot of price and payout addresses. A checkout is never edited:
 * any change to what is sold or where the money goes voids it and mints a new one with a new id, so a
 * link or a payment made for old terms stops working.
 */
export class Checkout extends Schema.Class<Checkout>("Checkout")({
  id: CheckoutId,
  listingId: ListingId,
  repo: RepoRef,
  price: Schema.NullOr(AtomicAmount),
  payTo: Wallets,
  createdAt: Schema.DateFromSelf,
  voidedAt: Schema.NullOr(Schema.DateFromSelf)
}) {
  get isVoid(): boolean {
    return this.voidedAt !== null
  }
  get chains() {
    return chainsOf(this.payTo)
  }
}

/** The checkout for a listing's current terms. */
export const buildCheckout = (listing: Listing, id: CheckoutId, now: Date): Checkout =>
  new Checkout({
    id,
    listingId: listing.id,
    repo: listing.repo,
    price: listing.price,
    payTo: listing.payTo,
    createdAt: now,
    voidedAt: null
  })

export const voidCheckout = (checkout: Checkout, now: Date): Checkout =>
  checkout.isVoid ? checkout : new Checkout({ ...checkout, voidedAt: now })

/** Public paths; hosts prefix them with `BASE_URL`. */
export const checkoutPath = (id: CheckoutId): string => `/checkout/${id}`
export const testCheckoutPath = (id: CheckoutId): string => `/checkout/${id}/test`
export const repoPagePath = (repo: { readonly owner: string; readonly name: string }): string =>
  `/r/${repo.owner}/${repo.name}`

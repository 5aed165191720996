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
  /** Whether the checkout was voided: its terms are gone and it can no longer be paid. */
  get isVoid(): boolean {
    return this.voidedAt !== null
  }
  /** The chains the checkout can be paid on: those it has a payout address for. */
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

/** The checkout voided at `now`; an already void checkout is returned as is, keeping its first void time. */
export const voidCheckout = (checkout: Checkout, now: Date): Checkout =>
  checkout.isVoid ? checkout : new Checkout({ ...checkout, voidedAt: now })

/** Public paths; hosts prefix them with `BASE_URL`. */
export const checkoutPath = (id: CheckoutId): string => `/checkout/${id}`
/** The checkout's test-payment path (pay through the test twin, no real money). */
export const testCheckoutPath = (id: CheckoutId): string => `/checkout/${id}/test`
/** The public page of a listed repo. */
export const repoPagePath = (repo: { readonly owner: string; readonly name: string }): string =>
  `/r/${repo.owner}/${repo.name}`

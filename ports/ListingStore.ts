import { Context, Data, type Effect, type Option } from "effect"
import type { Checkout } from "../domain/Checkout.js"
import type { AccountId, CheckoutId, ListingId } from "../domain/Ids.js"
import type { Listing } from "../domain/Listing.js"
import type { StorageError } from "./StorageError.js"

/** The store already holds a live listing for this repo (the database enforces one per repo). */
export class LiveListingExists extends Data.TaggedError("LiveListingExists")<{ readonly repo: string }> {}

/** A checkout with the listing it belongs to, as stored now; the listing is None if no such listing is stored. */
export interface CheckoutWithListing {
  /** The checkout. */
  readonly checkout: Checkout
  /** Its listing, or None. */
  readonly listing: Option.Option<Listing>
}

/** What a sitemap needs of a selling listing: where its pages are and when it last changed. */
export interface SellingRepo {
  /** The repo owner, in the code host's canonical case. */
  readonly owner: string
  /** The repo name, in the code host's canonical case. */
  readonly name: string
  /** When the listing last changed. */
  readonly updatedAt: Date
}

/**
 * Listings and their checkouts. Repo lookups are case-insensitive. Checkouts are kept after they are voided
 * so an old link answers "gone" rather than "unknown". Every method fails with `StorageError` when the store
 * does (`unavailable` when the database did not answer).
 */
export class ListingStore extends Context.Tag("repomarket/ListingStore")<ListingStore, {
  readonly findLive: (owner: string, name: string) => Effect.Effect<Option.Option<Listing>, StorageError>
  readonly findById: (id: ListingId) => Effect.Effect<Option.Option<Listing>, StorageError>
  /**
   * Like findById, and locks the listing until the current transaction ends, so a read-modify-write inside
   * one transaction sees no concurrent change. Call it inside `Transactor.withTransaction`.
   */
  readonly findByIdForUpdate: (id: ListingId) => Effect.Effect<Option.Option<Listing>, StorageError>
  /** The account's listings, newest first; taken-down ones only when asked. */
  readonly listByAccount: (
    accountId: AccountId,
    options: { readonly includeTakenDown: boolean }
  ) => Effect.Effect<ReadonlyArray<Listing>, StorageError>
  /** Live listings under a code-host owner, case-insensitively. */
  readonly listLiveByOwner: (owner: string) => Effect.Effect<ReadonlyArray<Listing>, StorageError>
  /**
   * Every selling listing (live, priced, with at least one payout address; `isSelling`), ordered by owner
   * then name, case-insensitively: the sitemap. Names and a date only, so a large market stays cheap.
   */
  readonly listSelling: () => Effect.Effect<ReadonlyArray<SellingRepo>, StorageError>
  readonly insert: (listing: Listing) => Effect.Effect<void, LiveListingExists | StorageError>
  /** Replaces the stored listing with the same id. */
  readonly update: (listing: Listing) => Effect.Effect<void, StorageError>
  readonly insertCheckout: (checkout: Checkout) => Effect.Effect<void, StorageError>
  /**
   * A checkout by id and its listing (`findById(checkout.listingId)`) in one lookup (one round trip in SQL),
   * for a buyer's request, which needs both. None when the checkout is unknown. Both are read at one moment
   * (one statement), never a checkout from before a change with its listing from after it.
   */
  readonly findCheckoutWithListing: (id: CheckoutId) => Effect.Effect<Option.Option<CheckoutWithListing>, StorageError>
  /** Marks a checkout void; voiding a void checkout keeps its first voiding time. */
  readonly voidCheckout: (id: CheckoutId, at: Date) => Effect.Effect<void, StorageError>
}>() {}

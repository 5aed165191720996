import { Context, Effect, Layer, Option } from "effect"
import type { Checkout } from "../../domain/Checkout.js"
import { Checkout as CheckoutClass } from "../../domain/Checkout.js"
import { repoKey, type CheckoutId, type ListingId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { isSelling } from "../../domain/rules/Selling.js"
import { ListingStore, LiveListingExists } from "../../ports/ListingStore.js"

// Code-point order of the lower-cased names, as PostgreSQL sorts them under the "C" collation.
const byLower = (a: string, b: string) => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  return x < y ? -1 : x > y ? 1 : 0
}

const newestFirst = (a: Listing, b: Listing) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)

/** The listings map, shared with ListingCatalogMemory, which searches the same listings. */
export class ListingsMemory extends Context.Tag("repomarket/ListingsMemory")<ListingsMemory, Map<ListingId, Listing>>() {
  /** A fresh, empty map: provide it once to both ListingStoreMemory and ListingCatalogMemory. */
  static readonly Live = Layer.sync(ListingsMemory, () => new Map<ListingId, Listing>())
}

/** The ListingStore in memory; needs ListingsMemory, which the catalog shares. */
export const ListingStoreMemory = Layer.effect(ListingStore, Effect.map(ListingsMemory, (listings) => {
  const checkouts = new Map<CheckoutId, Checkout>()
  const live = () => [...listings.values()].filter((l) => l.isLive)
  return {
    findLive: (owner, name) =>
      Effect.sync(() => Option.fromNullable(live().find((l) => l.repo.key === repoKey(owner, name)))),
    findById: (id) => Effect.sync(() => Option.fromNullable(listings.get(id))),
    // The memory Transactor runs rules one at a time, so a plain read is already as good as a lock.
    findByIdForUpdate: (id) => Effect.sync(() => Option.fromNullable(listings.get(id))),
    listByAccount: (accountId, { includeTakenDown }) =>
      Effect.sync(() =>
        [...listings.values()]
          .filter((l) => l.accountId === accountId && (includeTakenDown || l.isLive))
          .sort(newestFirst)
      ),
    listLiveByOwner: (owner) =>
      Effect.sync(() => live().filter((l) => l.repo.owner.toLowerCase() === owner.toLowerCase()).sort(newestFirst)),
    listSelling: () =>
      Effect.sync(() =>
        live()
          .filter(isSelling)
          .map((l) => ({ owner: l.repo.owner, name: l.repo.name, updatedAt: l.updatedAt }))
          .sort((a, b) => byLower(a.owner, b.owner) || byLower(a.name, b.name))
      ),
    insert: (listing) =>
      Effect.suspend(() => {
        if (listing.isLive && live().some((l) => l.repo.key === listing.repo.key)) {
          return Effect.fail(new LiveListingExists({ repo: listing.repo.slug }))
        }
        listings.set(listing.id, listing)
        return Effect.void
      }),
    update: (listing) => Effect.sync(() => void listings.set(listing.id, listing)),
    insertCheckout: (checkout) => Effect.sync(() => void checkouts.set(checkout.id, checkout)),
    findCheckoutWithListing: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(checkouts.get(id)), (checkout) => ({
          checkout,
          listing: Option.fromNullable(listings.get(checkout.listingId))
        }))
      ),
    voidCheckout: (id, at) =>
      Effect.sync(() => {
        const checkout = checkouts.get(id)
        if (checkout && checkout.voidedAt === null) checkouts.set(id, new CheckoutClass({ ...checkout, voidedAt: at }))
      })
  }
}))

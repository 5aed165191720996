import { Context, type Effect } from "effect"
import type { CatalogFacts, CatalogPage, CatalogQuery, CategoryCount } from "../domain/Catalog.js"
import type { SearchUnavailable } from "../domain/Errors.js"
import type { Listing } from "../domain/Listing.js"
import type { StorageError } from "./StorageError.js"

/**
 * The searchable catalog of listings that are selling: live, priced and with at least one payout address.
 * A port of its own, apart from ListingStore, so an embedder can serve search from another engine; the
 * adapters here read the listings themselves at query time, so a takedown or a reprice shows at once. Every
 * method fails with `StorageError` when the store does.
 */
export class ListingCatalog extends Context.Tag("repomarket/ListingCatalog")<ListingCatalog, {
  /**
   * One page of selling listings matching the query, in its order, after `query.after`. A page may hold fewer
   * entries than `query.limit` and still name a `next` position: an adapter may bound the work of one page
   * (see the SQL adapter's capped checks) and go on from there on the next. An adapter bounding a search's
   * time fails with `SearchUnavailable` past it.
   */
  readonly search: (query: CatalogQuery) => Effect.Effect<CatalogPage, SearchUnavailable | StorageError>
  /** How many selling listings each category holds (categories with none are left out). */
  readonly categoryCounts: Effect.Effect<ReadonlyArray<CategoryCount>, StorageError>
  /**
   * Records what the code host says about the listing's repo, replacing what was recorded before; the
   * listing's name and description as given here are searched too.
   */
  readonly describe: (listing: Listing, facts: CatalogFacts) => Effect.Effect<void, StorageError>
}>() {}

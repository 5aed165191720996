import type { ListingId } from "./Ids.js"
import type { Listing } from "./Listing.js"
import type { AtomicAmount } from "./Money.js"
import type { Chain } from "./Wallet.js"

/**
 * The fixed taxonomy of the catalog and the owner page's `indexed` list; the rule `categorize`
 * (domain/rules/Category.ts) gives a repo its category. The list is documented in the README and must only grow.
 */
export const CATEGORIES = [
  "ai-ml",
  "blockchain",
  "security",
  "devops",
  "data",
  "web",
  "mobile",
  "games",
  "cli",
  "library",
  "docs",
  "other"
] as const
/** One of `CATEGORIES`. */
export type Category = (typeof CATEGORIES)[number]

/** How the catalog is ordered. `relevance` needs a text query; without one the catalog is newest first. */
export const CATALOG_SORTS = ["relevance", "newest", "price", "stars"] as const
/** One of `CATALOG_SORTS`. */
export type CatalogSort = (typeof CATALOG_SORTS)[number]

/**
 * Where the previous page ended: the last entry's sort key and id. Keyset pagination on (key, id) never
 * repeats or skips an entry that stays in the catalog, whatever is inserted meanwhile.
 */
export type CatalogPosition =
  | { readonly sort: "relevance"; readonly rank: number; readonly id: ListingId }
  | { readonly sort: "newest"; readonly createdAt: Date; readonly id: ListingId }
  | { readonly sort: "price"; readonly price: AtomicAmount; readonly id: ListingId }
  | { readonly sort: "stars"; readonly stars: number; readonly id: ListingId }

/** A validated catalog query. Every filter narrows; absent filters do not. */
export interface CatalogQuery {
  /** Free text over the repo name, description, topics and README (words ANDed; `"phrase"`, `or`, `-word`). */
  readonly text: string | null
  /** Only repos whose language is this one (case-insensitive). */
  readonly language: string | null
  /** Only repos in this category. */
  readonly category: Category | null
  /** Only repos carrying this code-host topic. */
  readonly topic: string | null
  /** Only listings payable on this chain. */
  readonly chain: Chain | null
  /** Only listings priced at or below this amount. */
  readonly maxPrice: AtomicAmount | null
  /** The order of the page. */
  readonly sort: CatalogSort
  /** Where the previous page ended; null for the first page. */
  readonly after: CatalogPosition | null
  /** How many entries a page holds at most. */
  readonly limit: number
}

/** What the code host says about a listed repo that the catalog searches and shows beside the listing. */
export interface CatalogFacts {
  /** The repo's code-host topics, lower-cased. */
  readonly topics: ReadonlyArray<string>
  /** The repo's star count. */
  readonly stars: number
  /** The category derived from topics, description and language. */
  readonly category: Category
  /** The README as plain text, cut to `README_TEXT_LIMIT` characters. */
  readonly readmeText: string
}

/** One listing in the catalog with its facts, and its relevance when the query had text. */
export interface CatalogEntry {
  /** The listing itself. */
  readonly listing: Listing
  /** The README's text is searched, not returned. */
  readonly facts: Omit<CatalogFacts, "readmeText">
  /** Text-search relevance; null when the query had no text. */
  readonly rank: number | null
}

/** One page of the catalog, in the query's order. */
export interface CatalogPage {
  /** The entries of this page. */
  readonly entries: ReadonlyArray<CatalogEntry>
  /** The position after the last entry, when there may be more. */
  readonly next: CatalogPosition | null
}

/** How many selling listings a category holds, for browsing the catalog by category. */
export interface CategoryCount {
  /** The category. */
  readonly category: Category
  /** Its number of listings. */
  readonly count: number
}

/** The position an entry stands at under a sort. */
export const positionOf = (entry: CatalogEntry, sort: CatalogSort): CatalogPosition => {
  const id = entry.listing.id
  switch (sort) {
    case "relevance":
      return { sort, rank: entry.rank ?? 0, id }
    case "newest":
      return { sort, createdAt: entry.listing.createdAt, id }
    case "price":
      return { sort, price: entry.listing.price ?? (0n as AtomicAmount), id }
    case "stars":
      return { sort, stars: entry.facts.stars, id }
  }
}

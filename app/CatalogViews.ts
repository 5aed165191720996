import { type CatalogEntry, type CatalogQuery } from "../domain/Catalog.js"
import { checkoutPath, repoPagePath, testCheckoutPath } from "../domain/Checkout.js"
import { formatUsd } from "../domain/Money.js"
import { encodeCursor } from "../domain/rules/CatalogQuery.js"
import type { CatalogResult, Home } from "../domain/usecases/Catalog.js"
import { chainsOf } from "../domain/Wallet.js"
import type { CatalogItem, CatalogPageSchema, HomeSchema } from "./CatalogApi.js"

/** The catalog as JSON. Absolute checkout URLs on `BASE_URL`; `page` and `next` are paths. */

export const catalogItem = (e: CatalogEntry, baseUrl: string): typeof CatalogItem.Type => ({
  repo: e.listing.repo.slug,
  page: repoPagePath(e.listing.repo),
  // Only selling listings reach the catalog, so there is always a price.
  price_usd: formatUsd(e.listing.price ?? 0n),
  chains: chainsOf(e.listing.payTo),
  checkout_url: baseUrl + checkoutPath(e.listing.checkoutId),
  test_checkout_url: baseUrl + testCheckoutPath(e.listing.checkoutId),
  description: e.listing.description,
  language: e.listing.language,
  topics: e.facts.topics,
  stars: e.facts.stars,
  category: e.facts.category,
  listed_at: e.listing.createdAt.toISOString(),
  rank: e.rank
})

/** The query as the response echoes it: what was applied, after defaults. */
export const queryView = (q: CatalogQuery) => ({
  q: q.text,
  language: q.language,
  category: q.category,
  topic: q.topic,
  chain: q.chain,
  max_price_usd: q.maxPrice === null ? null : formatUsd(q.maxPrice),
  sort: q.sort,
  limit: q.limit
})

/** `/listings?…` for the same query at another cursor (none: the first page). */
export const catalogHref = (q: CatalogQuery, cursor: string | null, overrides: Partial<Record<string, string | null>> = {}): string => {
  const v = queryView(q)
  const params = new URLSearchParams()
  const entries: Record<string, string | null> = {
    ...Object.fromEntries(Object.entries(v).map(([k, value]) => [k, value === null ? null : String(value)])),
    cursor,
    ...overrides
  }
  if (entries["limit"] === "20") entries["limit"] = null
  for (const [k, value] of Object.entries(entries)) if (value !== null && value !== undefined) params.set(k, value)
  const s = params.toString()
  return s === "" ? "/listings" : `/listings?${s}`
}

export const catalogPageView = (r: CatalogResult, baseUrl: string): typeof CatalogPageSchema.Type => {
  const cursor = r.page.next === null ? null : encodeCursor(r.page.next)
  return {
    listings: r.page.entries.map((e) => catalogItem(e, baseUrl)),
    next_cursor: cursor,
    next: cursor === null ? null : catalogHref(r.query, cursor),
    query: queryView(r.query)
  }
}

export const howToBuyCatalog = (baseUrl: string) =>
  `Search ${baseUrl}/listings (JSON; q, language, category, topic, chain, max_price_usd, sort, cursor). Each result's ` +
  "checkout_url answers HTTP 402 with x402 payment requirements (USDC on Base or Solana): pay it with any x402 client " +
  "(e.g. @x402/fetch) and the paid request returns the repository as a .tar.gz. test_checkout_url rehearses with " +
  `simulated money. Agents: ${baseUrl}/llms.txt and ${baseUrl}/openapi.json.`

export const homeView = (h: Home, baseUrl: string): typeof HomeSchema.Type => ({
  search: "/listings",
  newest: h.newest.entries.map((e) => catalogItem(e, baseUrl)),
  categories: h.categories.map((c) => ({ ...c, listings: `/listings?category=${c.category}` })),
  how_to_buy: howToBuyCatalog(baseUrl),
  llms_txt: "/llms.txt",
  openapi: "/openapi.json"
})

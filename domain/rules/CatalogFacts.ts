import type { CatalogFacts } from "../Catalog.js"
import type { Listing } from "../Listing.js"
import { categorize } from "./Category.js"
import { readmeSearchText } from "./SearchText.js"

/** The facts of a listing nothing is known about yet (listed before the catalog, or the host never answered). */
export const noFacts = (listing: Listing): CatalogFacts => ({
  topics: [],
  stars: 0,
  category: categorize({ topics: [], description: listing.description, language: listing.language }),
  readmeText: ""
})

/** The facts to record from what the code host said about a repo and its README (Markdown), if any. */
export const factsFrom = (
  repo: { readonly topics: ReadonlyArray<string>; readonly stars: number; readonly description: string | null; readonly language: string | null },
  readmeMarkdown: string | null
): CatalogFacts => ({
  topics: repo.topics.map((t) => t.toLowerCase()),
  stars: Math.max(0, Math.min(Math.trunc(repo.stars), 2_147_483_647)),
  category: categorize(repo),
  readmeText: readmeMarkdown === null ? "" : readmeSearchText(readmeMarkdown)
})

import { Effect, Either, Option, type Redacted } from "effect"
import type { CatalogPage, CatalogQuery, CategoryCount } from "../Catalog.js"
import { factsFrom } from "../rules/CatalogFacts.js"
import { type CatalogParams, parseCatalogQuery } from "../rules/CatalogQuery.js"
import { CATEGORIES } from "../rules/Category.js"
import { CodeHost, type RepoInfo } from "../../ports/CodeHost.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"

/** What `Catalog.search` answers: the validated query and its page. */
export interface CatalogResult {
  /** The query as validated, with its defaults filled in. */
  readonly query: CatalogQuery
  /** The page of listings it found. */
  readonly page: CatalogPage
}

/** What the home page shows. */
export interface Home {
  /** The newest selling listings (`HOME_NEWEST` of them). */
  readonly newest: CatalogPage
  /** Every category of the taxonomy, in its order, with how many listings it holds (0 included). */
  readonly categories: ReadonlyArray<CategoryCount>
}

/** How many listings the home page shows. */
export const HOME_NEWEST = 12

/**
 * What the catalog searches about a listed repo, from the code host: its topics and stars (already in
 * `info`) and its README. A README the host cannot give right now is left out rather than failing the
 * listing: the next refresh (a re-list, a new token) records it.
 */
export const readFacts = (info: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) =>
  Effect.flatMap(CodeHost, (host) => host.readme(info, token)).pipe(
    Effect.map((readme) => factsFrom(info, Option.getOrNull(Option.map(readme, (r) => r.markdown)))),
    Effect.orElseSucceed(() => factsFrom(info, null))
  )

/** Finding what is for sale: the catalog's search and the home page, and keeping the catalog's facts current. */
export class Catalog extends Effect.Service<Catalog>()("repomarket/Catalog", {
  effect: Effect.gen(function*() {
    const catalog = yield* ListingCatalog

    const search = Effect.fn("Catalog.search")(function*(params: CatalogParams) {
      const query = yield* Either.match(parseCatalogQuery(params), { onLeft: Effect.fail, onRight: Effect.succeed })
      return { query, page: yield* catalog.search(query) } satisfies CatalogResult
    })

    const home = Effect.fn("Catalog.home")(function*() {
      const [newest, counts] = yield* Effect.all([
        catalog.search({ text: null, language: null, category: null, topic: null, chain: null, maxPrice: null, sort: "newest", after: null, limit: HOME_NEWEST }),
        catalog.categoryCounts
      ], { concurrency: 2 })
      const byCategory = new Map(counts.map((c) => [c.category, c.count]))
      return { newest, categories: CATEGORIES.map((category) => ({ category, count: byCategory.get(category) ?? 0 })) } satisfies Home
    })

    return { search, home } as const
  })
}) {}

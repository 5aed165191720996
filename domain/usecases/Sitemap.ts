import { Effect } from "effect"
import { ListingStore, type SellingRepo } from "../../ports/ListingStore.js"

/** One public page a search engine may index: an owner page or a repo page, with when it last changed. */
export interface SitemapPage {
  /** `/r/<owner>` or `/r/<owner>/<repo>`, in the code host's canonical case. */
  readonly path: string
  /** When the page's listings last changed. */
  readonly lastModified: Date
}

/** The sitemaps.org limit of URLs in one file; past it the sitemap becomes an index of files this size. */
export const URLS_PER_SITEMAP = 50_000

/**
 * The pages of the selling listings (live, priced, with a payout address): each owner's page once, then its
 * repo pages. Taken-down and unsellable listings are left out (a taken-down repo page is a 404; one that
 * sells nothing is not worth a crawl). An owner page's date is its newest listing's.
 */
export const sitemapPages = (repos: ReadonlyArray<SellingRepo>): ReadonlyArray<SitemapPage> => {
  const pages: Array<SitemapPage> = []
  let i = 0
  while (i < repos.length) {
    const owner = repos[i]!.owner
    let j = i
    let newest = repos[i]!.updatedAt
    while (j < repos.length && repos[j]!.owner.toLowerCase() === owner.toLowerCase()) {
      if (repos[j]!.updatedAt > newest) newest = repos[j]!.updatedAt
      j++
    }
    pages.push({ path: `/r/${owner}`, lastModified: newest })
    for (const r of repos.slice(i, j)) pages.push({ path: `/r/${r.owner}/${r.name}`, lastModified: r.updatedAt })
    i = j
  }
  return pages
}

/** The public pages worth indexing, for `/sitemap.xml`. */
export class Sitemap extends Effect.Service<Sitemap>()("repomarket/Sitemap", {
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    return {
      pages: Effect.fn("Sitemap.pages")(function*() {
        return sitemapPages(yield* store.listSelling())
      })
    }
  })
}) {}

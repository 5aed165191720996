import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CATALOG_SORTS } from "../domain/Catalog.js"
import { CATEGORIES } from "../domain/rules/Category.js"
import * as P from "./Problem.js"

/** Every parameter is a string here and validated by the use case, so one 400 names every bad parameter. */
const param = (description: string) => Schema.optional(Schema.String.annotations({ description }))

export const CatalogParamsSchema = Schema.Struct({
  q: param("Words searched in the repo name (ranked first), description and topics, then the README. Words are ANDed; \"a phrase\", `or` and `-word` work as in a web search. At most 200 characters, 8 alternatives joined by or, and 8 words in a quoted phrase (400 beyond). Text of only excluded words has no rank (by id, as without text). Where no index can decide the text (only excluded words, a quoted phrase), a page checks a bounded number of listings and may end early, with fewer results and a next_cursor that goes on."),
  language: param("The repo's main language, any case (e.g. TypeScript, C++)."),
  category: param(`One of ${CATEGORIES.join(", ")} (the owner page's categories).`),
  topic: param("A code-host topic, e.g. cli."),
  chain: param("base or solana: only listings paid on that chain."),
  max_price_usd: param("Highest price in US dollars, inclusive (e.g. 20 or 19.99)."),
  sort: param(`${CATALOG_SORTS.join(", ")}. Default: relevance with q, else newest. price is cheapest first, stars most first.`),
  cursor: param("next_cursor of the previous page, with the same sort."),
  limit: param("1 to 100, default 20.")
})

export const CatalogItem = Schema.Struct({
  repo: Schema.String,
  page: Schema.String.annotations({ description: "The repo page path: its preview (tree, README) and checkout" }),
  price_usd: Schema.String,
  chains: Schema.Array(Schema.Literal("base", "solana")),
  checkout_url: Schema.String,
  test_checkout_url: Schema.String,
  description: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  topics: Schema.Array(Schema.String),
  stars: Schema.Int,
  category: Schema.Literal(...CATEGORIES),
  listed_at: Schema.String,
  rank: Schema.NullOr(Schema.Number).annotations({ description: "Relevance class for q, higher first: 2 the repo name matches the whole query, 1 the name, description and topics do, 0 only the README; null without q, or when q is only excluded words" })
}).annotations({ identifier: "CatalogItem" })

export const CatalogPageSchema = Schema.Struct({
  listings: Schema.Array(CatalogItem),
  next_cursor: Schema.NullOr(Schema.String),
  next: Schema.NullOr(Schema.String).annotations({ description: "The next page's URL path, or null on the last page" }),
  query: Schema.Struct({
    q: Schema.NullOr(Schema.String),
    language: Schema.NullOr(Schema.String),
    category: Schema.NullOr(Schema.String),
    topic: Schema.NullOr(Schema.String),
    chain: Schema.NullOr(Schema.String),
    max_price_usd: Schema.NullOr(Schema.String),
    sort: Schema.Literal(...CATALOG_SORTS),
    limit: Schema.Int
  })
}).annotations({ identifier: "CatalogPage" })

export const HomeSchema = Schema.Struct({
  search: Schema.String,
  newest: Schema.Array(CatalogItem),
  categories: Schema.Array(Schema.Struct({ category: Schema.Literal(...CATEGORIES), count: Schema.Int, listings: Schema.String })),
  how_to_buy: Schema.String,
  llms_txt: Schema.String,
  openapi: Schema.String
}).annotations({ identifier: "Home" })

const negotiated = "JSON unless the Accept header prefers text/html: then the same page as HTML for browsers. Counted with the public pages (PUBLIC_PAGES_PER_MINUTE per client address; 429 with Retry-After); a search with text counts as PUBLIC_SEARCH_COST pages (default 4). At most CATALOG_CONCURRENCY catalog reads run at once: beyond that one waits up to CATALOG_QUEUE_MS, then 503 search_busy with Retry-After; a search needing more than CATALOG_STATEMENT_TIMEOUT_MS of database time per statement is 503 search_too_broad with Retry-After."

/** Finding what is for sale: the catalog and the home page. */
export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("listings", "/listings")
      .setUrlParams(CatalogParamsSchema)
      .addSuccess(CatalogPageSchema)
      .addError(P.InvalidInput)
      .addError(P.RateLimited)
      .addError(P.SearchUnavailable)
      .annotate(OpenApi.Summary, "Search the listings for sale")
      .annotate(OpenApi.Description, `Live listings that are selling (priced, with a payout address), filtered, sorted and paged by cursor (next_cursor; pages never repeat or skip a listing while others are added). Unknown or repeated parameters are a 400 naming them. ${negotiated}`)
  )
  .add(
    HttpApiEndpoint.get("home", "/")
      .addSuccess(HomeSchema)
      .addError(P.RateLimited)
      .addError(P.SearchUnavailable)
      .annotate(OpenApi.Summary, "The home page: newest listings and categories with counts")
      .annotate(OpenApi.Description, negotiated)
  )
{}

import type { CatalogQuery } from "../../domain/Catalog.js"
import { CATALOG_SORTS } from "../../domain/Catalog.js"
import { CATEGORIES } from "../../domain/rules/Category.js"
import type { CatalogResult, Home } from "../../domain/usecases/Catalog.js"
import type { CatalogItem } from "../CatalogApi.js"
import { catalogHref, catalogPageView, homeView, queryView } from "../CatalogViews.js"
import { dollars, html, type Html, htmlResponse, layout } from "./Html.js"

const chainLabel = { base: "Base", solana: "Solana" } as const
const sortLabel = { relevance: "Best match", newest: "Newest", price: "Lowest price", stars: "Most stars" } as const

/** One listing as a card: every value is seller- or code-host-controlled text, escaped by `html`. */
const card = (i: typeof CatalogItem.Type): Html => html`<article class="card listing">
<h3><a href="${i.page}">${i.repo}</a> <span class="price">${dollars(i.price_usd)}</span></h3>
${i.description === null || i.description === "" ? "" : html`<p>${i.description}</p>`}
<ul class="facts">
${i.language === null ? "" : html`<li>${i.language}</li>`}
<li><a href="/listings?category=${i.category}">${i.category}</a></li>
<li>★ ${i.stars}</li>
<li>${i.chains.map((c) => chainLabel[c]).join(" · ")}</li>
${i.topics.slice(0, 6).map((t) => html`<li><a href="/listings?topic=${encodeURIComponent(t)}">#${t}</a></li>`)}
</ul>
</article>`

/** The search form: a plain GET to /listings, so it works without script under the strict policy. */
const searchForm = (q: CatalogQuery | null): Html => {
  const v = q === null ? null : queryView(q)
  const option = (value: string, label: string, selected: string | null | undefined) =>
    html`<option value="${value}"${selected === value ? html` selected` : ""}>${label}</option>`
  return html`<form class="search" method="get" action="/listings" role="search">
<label for="q">Search repositories</label>
<input type="text" id="q" name="q" value="${v?.q ?? ""}" maxlength="200" placeholder="e.g. typescript sdk">
<div class="filters">
<label>Category <select name="category">${option("", "any", v?.category ?? "")}${CATEGORIES.map((c) => option(c, c, v?.category))}</select></label>
<label>Language <input type="text" name="language" value="${v?.language ?? ""}" maxlength="50" size="12"></label>
<label>Chain <select name="chain">${option("", "any", v?.chain ?? "")}${option("base", "Base", v?.chain)}${option("solana", "Solana", v?.chain)}</select></label>
<label>Up to $ <input type="text" name="max_price_usd" value="${v?.max_price_usd ?? ""}" maxlength="9" size="8" inputmode="decimal"></label>
<label>Order <select name="sort">${CATALOG_SORTS.map((s) => option(s, sortLabel[s], v?.sort))}</select></label>
${v?.topic == null ? "" : html`<input type="hidden" name="topic" value="${v.topic}">`}
</div>
<button type="submit">Search</button>
</form>`
}

const agentsLine = html`<p class="muted">Agents buy here too: each listing's checkout answers HTTP 402 with x402 payment
requirements (USDC on Base or Solana). Start at <a href="/llms.txt">/llms.txt</a>, or search
<code>/listings</code> as JSON (<a href="/openapi.json">OpenAPI</a>).</p>`

/** `/listings` for a browser: the form with the query filled in, the results, and a link to the next page. */
export const catalogPageHtml = (r: CatalogResult, baseUrl: string) => {
  const v = catalogPageView(r, baseUrl)
  const what = r.query.text === null ? "Repositories for sale" : `Results for “${r.query.text}”`
  const main = html`<h1>${what}</h1>
${searchForm(r.query)}
<section id="results" aria-live="polite">
${v.listings.length === 0
    ? v.next === null
      ? html`<p class="empty">Nothing for sale matches this search. <a href="/listings">See everything for sale</a>.</p>`
      // A search whose words no index can narrow checks a bounded number of listings a page (the next goes on).
      : html`<p class="empty">No match among the listings this page could check; the next page checks further.</p>`
    : v.listings.map(card)}
</section>
${v.next === null ? "" : html`<p><a rel="next" class="next" href="${v.next}">Next page →</a></p>`}
${r.query.after === null ? "" : html`<p><a href="${catalogHref(r.query, null)}">← First page</a></p>`}
${agentsLine}`
  return htmlResponse(layout({ title: what, main }), { cache: "no-cache", headers: { vary: "Accept" } })
}

/** `/` for a browser: search, the newest listings, categories with counts, and how agents buy. */
export const homePageHtml = (h: Home, baseUrl: string) => {
  const v = homeView(h, baseUrl)
  const main = html`<h1>Buy code repositories, pay with USDC</h1>
<p class="lede">Sellers list GitHub repositories; people and AI agents pay per repository over x402 and get the code as a download.</p>
${searchForm(null)}
<section id="newest">
<h2>Newest listings</h2>
${v.newest.length === 0
    ? html`<p class="empty">Nothing is for sale yet. <a href="/signin">Sign in</a> to list a repository.</p>`
    : html`${v.newest.map(card)}<p><a href="/listings">Everything for sale →</a></p>`}
</section>
<section id="categories">
<h2>Categories</h2>
<ul class="facts">
${v.categories.map((c) => html`<li><a href="${c.listings}">${c.category}</a> <span class="count">${c.count}</span></li>`)}
</ul>
</section>
<section id="agents">
<h2>For agents</h2>
${agentsLine}
</section>`
  return htmlResponse(layout({ title: "Repositories for sale", main }), { cache: "no-cache", headers: { vary: "Accept" } })
}

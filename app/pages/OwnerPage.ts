import { CATEGORIES } from "../../domain/rules/Category.js"
import type { OwnerPage } from "../../domain/usecases/Storefront.js"
import { ownerPageView } from "../Views.js"
import { dollars, html, htmlResponse, layout, safeHref } from "./Html.js"

const chainLabel = { base: "Base", solana: "Solana" } as const

/** `/r/<owner>` for a browser: the tagline when claimed, what is for sale, and the free index by category. */
export const ownerPageHtml = (page: OwnerPage, baseUrl: string) => {
  const v = ownerPageView(page, baseUrl)
  const groups = CATEGORIES.map((c) => [c, v.indexed.filter((r) => r.category === c)] as const).filter(([, rs]) => rs.length > 0)
  const main = html`
<h1>${v.owner}</h1>
${v.storefront_tagline === null ? "" : html`<p class="tagline">${v.storefront_tagline}</p>`}
<p class="muted"><a href="${safeHref(v.host)}" rel="noopener noreferrer">${v.owner} on the code host</a></p>

<section id="inventory">
<h2>For sale</h2>
${v.inventory.length === 0
    ? html`<p class="muted">Nothing is for sale here yet.</p>`
    : html`<table class="stack"><thead><tr><th>Repository</th><th>Price</th><th>Chains</th><th>About</th></tr></thead><tbody>
${v.inventory.map((i) => html`<tr>
<td data-label="Repository"><a href="${i.page}">${i.repo}</a></td>
<td data-label="Price">${dollars(i.price_usd)}${i.selling ? "" : html` <span class="bad">(not selling)</span>`}</td>
<td data-label="Chains">${i.chains.map((c) => chainLabel[c]).join(", ") || "—"}</td>
<td data-label="About">${i.description ?? ""}${i.language === null ? "" : html` <span class="muted">· ${i.language}</span>`}</td>
</tr>`)}
</tbody></table>`}
</section>

<section id="indexed">
<h2>Free repositories</h2>
${v.indexed_note === null ? "" : html`<p class="muted" id="indexed-note">${v.indexed_note}</p>`}
${groups.length === 0
    ? (v.indexed_note === null ? html`<p class="muted">No other public repositories.</p>` : "")
    : groups.map(([category, repos]) => html`<h3 id="category-${category}">${category}</h3><ul>
${repos.map((r) => html`<li><a href="${safeHref(r.host)}" rel="noopener noreferrer">${r.repo}</a>${r.description === "" ? "" : html` — ${r.description}`}
<span class="muted">${r.language === null ? "" : ` · ${r.language}`} · ★ ${r.stars}${r.license === "NOASSERTION" ? "" : ` · ${r.license}`}</span></li>`)}
</ul>`)}
</section>

<section id="buy">
<h2>How to buy</h2>
<p>${v.how_to_buy}</p>
<p>In a browser, each repository page above shows its checkout, its test checkout and a copyable example.</p>
</section>`
  return htmlResponse(layout({ title: v.owner, main }), { cache: "no-cache", headers: { vary: "Accept" } })
}

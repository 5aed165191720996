import { Option } from "effect"
import type { RepoPage } from "../../domain/usecases/Storefront.js"
import type { TreeEntry } from "../../ports/CodeHost.js"
import { repoPageView } from "../Views.js"
import { repoPageHead } from "./RepoPageMeta.js"
import { dollars, html, type Html, htmlResponse, layout, newNonce, safeHref, trustedHtml, updatesWords } from "./Html.js"

/** Big trees are cut here: the page stays light, the JSON keeps the whole tree. */
const MAX_TREE_ENTRIES = 1500

interface Dir {
  readonly dirs: Map<string, Dir>
  readonly files: Array<{ readonly name: string; readonly size: number | null }>
}

const treeOf = (entries: ReadonlyArray<TreeEntry>): Dir => {
  const root: Dir = { dirs: new Map(), files: [] }
  const dirAt = (parts: ReadonlyArray<string>) =>
    parts.reduce((dir, part) => {
      let next = dir.dirs.get(part)
      if (next === undefined) dir.dirs.set(part, next = { dirs: new Map(), files: [] })
      return next
    }, root)
  for (const e of entries) {
    const parts = e.path.split("/")
    if (e.type === "dir") dirAt(parts)
    else dirAt(parts.slice(0, -1)).files.push({ name: parts.at(-1)!, size: e.size })
  }
  return root
}

const size = (bytes: number | null): string =>
  bytes === null ? "" : bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1048576).toFixed(1)} MB`

const byName = <A>(a: [string, A], b: [string, A]) => a[0].localeCompare(b[0])

/** Nested details/summary: browsable without a script, folded below the top level. */
const renderDir = (dir: Dir): Html => html`<ul>${[...dir.dirs.entries()].sort(byName).map(([name, sub]) =>
  html`<li><details><summary>${name}/</summary>${renderDir(sub)}</details></li>`)}${
  [...dir.files].sort((a, b) => a.name.localeCompare(b.name)).map((f) => html`<li>${f.name}<span class="size">${size(f.size)}</span></li>`)
}</ul>`

/** Official x402 clients refuse more than $1 by default (compared in cents: no floating point near money). */
const aboveDefaultCap = (usd: string | null): boolean => usd !== null && BigInt(usd.replace(".", "")) > 100n

/** A copyable buyer's script with the official x402 client; spend controls are raised for prices above $1. */
export const buyExample = (testCheckoutUrl: string, priceUsd: string | null, filename: string): string => {
  const overCap = aboveDefaultCap(priceUsd)
  return [
    `import { writeFile } from "node:fs/promises"`,
    `import { wrapFetchWithPayment } from "@x402/fetch"`,
    `import { x402Client } from "@x402/core/client"`,
    `import { ExactEvmScheme } from "@x402/evm/exact/client"`,
    `import { privateKeyToAccount } from "viem/accounts"`,
    ``,
    `const buyer = privateKeyToAccount(process.env.BUYER_PRIVATE_KEY)`,
    `const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))`,
    `// Official clients refuse payments above $1 unless their spend controls allow more.`,
    overCap ? `client.setSpendControls({ maxAmountPerPayment: "$${priceUsd}" })` : `// client.setSpendControls({ maxAmountPerPayment: "$5.00" })`,
    `const pay = wrapFetchWithPayment(fetch, client)`,
    ``,
    `// Rehearse on the test twin (simulated money); then use the checkout URL.`,
    `const res = await pay(${JSON.stringify(testCheckoutUrl)})`,
    `if (!res.ok) throw new Error(\`purchase failed: \${res.status}\`)`,
    `await writeFile(${JSON.stringify(filename)}, Buffer.from(await res.arrayBuffer()))`
  ].join("\n")
}

const chainLabel = { base: "Base", solana: "Solana" } as const

/** `/r/<owner>/<repo>` for a browser: what is sold, the free preview, and how to pay for it. */
export const repoPageHtml = (page: RepoPage, baseUrl: string) => {
  const v = repoPageView(page, baseUrl)
  const nonce = newNonce()
  const entries = v.tree?.entries ?? []
  const shown = entries.slice(0, MAX_TREE_ENTRIES)
  const cut = entries.length > shown.length || v.tree?.truncated === true
  const readme = page.preview === null ? Option.none() : page.preview.readme
  const main = html`
<h1>${v.repo}</h1>
${v.description === null || v.description === "" ? "" : html`<p class="lede">${v.description}</p>`}
<p><span class="price">${dollars(v.price_usd)}</span> ${v.price_usd === null ? "" : "USDC"}
 <span class="${v.selling ? "ok" : "bad"}">· ${v.note}</span></p>
${v.selling
    ? html`<p class="buy"><a class="button" href="${v.checkout_url}" id="buy-now">Buy for ${dollars(v.price_usd)}</a>
 <a href="${v.test_checkout_url}" id="buy-test">Rehearse with simulated money</a></p>`
    : ""}
<ul class="facts">
${v.chains.map((c) => html`<li>${chainLabel[c]}</li>`)}
${v.language === null ? "" : html`<li>${v.language}</li>`}
${v.license === null ? "" : html`<li>${v.license}</li>`}
${v.stars === null ? "" : html`<li>★ ${v.stars}</li>`}
${v.private ? html`<li>private repository</li>` : ""}
<li><a href="${safeHref(v.host_url)}" rel="noopener noreferrer">on the code host</a></li>
</ul>
${v.commit === null
    ? ""
    : html`<p class="muted" id="pinned">A purchase delivers commit <code>${v.commit}</code>${v.archive === null
      ? html` (its archive's SHA-256 is named here, in every 402 and in the signed receipt once it was first cut)`
      : html`: archive SHA-256 <code>${v.archive.sha256}</code>, ${v.archive.size} bytes`}; every purchase comes with a signed receipt (<a href="/.well-known/jwks.json">keys</a>).</p>`}
<p id="updates">${updatesWords(v.updates_days)}${v.updates_days === 0
    ? "."
    : html` <span class="muted">(within them the buyer may download the latest commit again without paying, as a new signed delivery)</span>`}</p>

<section id="buy">
<h2>How to buy</h2>
<p>Pay the checkout with any x402 client: it answers <code>402 Payment Required</code> with the price and the
seller's wallet${v.chains.length > 1 ? "s" : ""}; your client signs a USDC payment and the paid request returns the
repository as a <code>.tar.gz</code> (default branch, pinned commit).</p>
<label for="checkout-url">Checkout</label><code class="url" id="checkout-url">${v.checkout_url}</code>
<label for="test-checkout-url">Test checkout (simulated money, for rehearsal)</label><code class="url" id="test-checkout-url">${v.test_checkout_url}</code>
<p>Agents: fetch this page with <code>Accept: application/json</code> for the same facts as JSON.</p>
<h3>Example with @x402/fetch</h3>
<pre data-copy><code>${buyExample(v.test_checkout_url, v.price_usd, `${v.repo.replace("/", "-")}.tar.gz`)}</code></pre>
${aboveDefaultCap(v.price_usd)
    ? html`<p class="muted">This price is above $1: official clients refuse it until you raise their spend controls (<code>setSpendControls</code>).</p>`
    : ""}
</section>

<section id="files">
<h2>Files</h2>
${v.tree === null
    ? html`<p class="muted">The file tree cannot be previewed right now.</p>`
    : html`<div class="tree">${renderDir(treeOf(shown))}</div>${cut ? html`<p class="muted">The tree is longer than shown here.</p>` : ""}`}
</section>

<section id="readme">
<h2>README</h2>
${Option.match(readme, {
    onNone: () => html`<p class="muted">No README to preview.</p>`,
    onSome: (r) => html`<article class="readme" data-path="${r.path}">${trustedHtml(r.html)}</article>`
  })}
</section>`
  return htmlResponse(layout({ title: v.repo, main, nonce, head: repoPageHead(v, baseUrl) }), { nonce, cache: "no-cache", headers: { vary: "Accept" } })
}

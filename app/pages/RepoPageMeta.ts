import type { Chain } from "../../domain/Wallet.js"
import { html, Html } from "./Html.js"

/** What a repo page's link preview and structured data say: the facts of the repo page's view. */
export interface RepoPageFacts {
  readonly repo: string
  readonly page: string
  readonly description: string | null
  readonly price_usd: string | null
  readonly selling: boolean
  readonly chains: ReadonlyArray<Chain>
  readonly language: string | null
  readonly license: string | null
  readonly topics: ReadonlyArray<string>
}

const chainLabel: Record<Chain, string> = { base: "Base", solana: "Solana" }

/** Previews cut descriptions anyway; a bounded one keeps a seller's essay out of every share card. */
const MAX_DESCRIPTION = 300

const clip = (s: string): string => {
  const chars = [...s.replace(/\s+/g, " ").trim()]
  return chars.length <= MAX_DESCRIPTION ? chars.join("") : chars.slice(0, MAX_DESCRIPTION - 1).join("") + "…"
}

/** The one-sentence summary a chat app or search result shows: what it is, then what it costs and where. */
export const previewDescription = (f: RepoPageFacts): string => {
  const offer = f.selling && f.price_usd !== null
    ? `$${f.price_usd} USDC on ${f.chains.map((c) => chainLabel[c]).join(" or ")}, paid over x402; the source as a .tar.gz.`
    : "Not on sale right now."
  return clip(f.description === null || f.description.trim() === "" ? `${f.repo}. ${offer}` : `${f.description.trim()} ${offer}`)
}

/**
 * A JSON value inside `<script type="application/ld+json">`. The HTML parser ends the element at the first
 * `</script` and treats `<!--` specially, whatever the JSON means, so every `<`, `>` and `&` is written as a
 * JSON `\u` escape (the same string to a JSON reader); U+2028/U+2029 likewise, for old JavaScript readers.
 * The element is a data block: browsers never run it, so the page's CSP (`script-src` by nonce) has nothing
 * to allow, and no nonce is given to it.
 */
export const jsonLdScript = (value: unknown): Html =>
  new Html(
    `<script type="application/ld+json">${
      JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    }</script>`
  )

/** schema.org `Product` with an `Offer` in USDC (a ticker schema.org accepts for `priceCurrency`) while it sells. */
export const productJsonLd = (f: RepoPageFacts, url: string): Record<string, unknown> => {
  const [owner] = f.repo.split("/")
  return {
    "@context": "https://schema.org",
    "@type": "Product",
    name: f.repo,
    description: previewDescription(f),
    url,
    sku: f.repo,
    brand: { "@type": "Brand", name: owner },
    category: "Source code repository",
    ...(f.topics.length > 0 ? { keywords: f.topics.join(", ") } : {}),
    ...(f.selling && f.price_usd !== null
      ? {
        offers: {
          "@type": "Offer",
          url,
          price: f.price_usd,
          priceCurrency: "USDC",
          availability: "https://schema.org/InStock",
          itemCondition: "https://schema.org/NewCondition",
          acceptedPaymentMethod: f.chains.map((c) => `USDC on ${chainLabel[c]} (x402)`)
        }
      }
      : {})
  }
}

/**
 * The repo page's `<head>` additions: canonical URL, description, OpenGraph and Twitter card meta (title,
 * description, price) and the JSON-LD product. OpenGraph's `product:price:currency` must be ISO 4217, so it
 * says USD (the price is in USDC, one to one); the Twitter card and JSON-LD say USDC. Every value is escaped by `html` (attributes) or
 * `jsonLdScript`; seller text (the description, topics) never reaches the markup raw.
 */
export const repoPageHead = (f: RepoPageFacts, baseUrl: string): Html => {
  const url = baseUrl + f.page
  const title = `${f.repo} · repomarket`
  const description = previewDescription(f)
  const priced = f.selling && f.price_usd !== null
  return html`<link rel="canonical" href="${url}">
<meta name="description" content="${description}">
<meta property="og:type" content="${priced ? "product" : "website"}">
<meta property="og:site_name" content="repomarket">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${url}">
${priced
    ? html`<meta property="product:price:amount" content="${f.price_usd}">
<meta property="product:price:currency" content="USD">
`
    : ""}<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="${title}">
<meta name="twitter:description" content="${description}">
${priced
    ? html`<meta name="twitter:label1" content="Price">
<meta name="twitter:data1" content="${`$${f.price_usd} USDC`}">
<meta name="twitter:label2" content="Pay on">
<meta name="twitter:data2" content="${f.chains.map((c) => chainLabel[c]).join(", ")}">
`
    : ""}${jsonLdScript(productJsonLd(f, url))}`
}

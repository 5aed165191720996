import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { AccountId, CheckoutId, ListingId, RepoRef } from "../../domain/Ids.js"
import { Listing } from "../../domain/Listing.js"
import { AtomicAmount } from "../../domain/Money.js"
import { SITEMAP_MEMO_MS } from "../../app/pages/DiscoveryRoutes.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { BASE_URL, BASE_WALLET, call, DEFAULT_REPOS, signInWithKey, SOLANA_WALLET, TestApp } from "../support/app.js"
import { BASE_ADDRESS } from "../support/fixtures.js"
import { listed } from "../support/flows.js"
import { expectPage, htmlGet } from "../support/pages.js"

// Discovery for crawlers, chat apps and agents: robots.txt, the sitemap, the repo page's link preview and
// structured data, and /llms.txt (linked from the OpenAPI document).

const EVIL_DESCRIPTION = `Fast </script><script>window.__pwned=1</script> & "quoted" 'single' <!-- x --> \u2028 ok`
const EVIL_REPO: FakeRepo = { owner: "Evil-Org", name: "payload", description: EVIL_DESCRIPTION, topics: ["cli", "<b>x</b>"] }
const UNPRICED: FakeRepo = { owner: "Other-Org", name: "unpriced", description: "no price yet" }
const GONE: FakeRepo = { owner: "Gone-Org", name: "gone", description: "taken down" }
const REPOS = [...DEFAULT_REPOS, EVIL_REPO, UNPRICED, GONE]

/** The `<loc>` values of a sitemap. */
const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!)

/** The `content` of a `<meta property|name="...">`, unescaped as a browser reads it. */
const meta = (page: string, key: string): string | undefined => {
  const m = new RegExp(`<meta (?:property|name)="${key.replace(/[:.]/g, "\\$&")}" content="([^"]*)">`).exec(page)
  return m?.[1]?.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
}

/** The JSON-LD blocks of a page, parsed as a search engine does (the element's text, as JSON). */
const jsonLd = (page: string) =>
  [...page.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((m) => JSON.parse(m[1]!))

describe("robots.txt, sitemap.xml and llms.txt", () => {
  layer(TestApp({ repos: REPOS }))((it) => {
    it.effect("robots.txt keeps crawlers off checkouts, receipts, sign-in and the dashboard, and names the sitemap", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/robots.txt")
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toBe("text/plain; charset=utf-8")
        expect(reply.headers["cache-control"]).toMatch(/^public, max-age=\d+$/)
        const lines = reply.text.split("\n")
        expect(lines).toContain("User-agent: *")
        for (const path of ["/checkout/", "/downloads/", "/dashboard", "/auth/", "/signin", "/signout", "/my/", "/listings?"]) {
          expect(lines).toContain(`Disallow: ${path}`)
        }
        expect(lines).toContain(`Sitemap: ${BASE_URL}/sitemap.xml`)
        expect(reply.text).not.toMatch(/Disallow: \/r\//)
      }))

    it.effect("the sitemap lists the owner and repo pages of selling listings only, absolute and escaped", () =>
      Effect.gen(function*() {
        const empty = yield* call("GET", "/sitemap.xml")
        expect(empty.status).toBe(200)
        expect(empty.headers["content-type"]).toBe("application/xml; charset=utf-8")
        expect(locs(empty.text)).toEqual([])
        expect(empty.text).toContain(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)

        const { key } = yield* signInWithKey("sitemap@example.com")
        yield* listed({ host_url: "https://github.com/octo-org/widget", price_usd: "12.00", wallet_base: BASE_WALLET }, key)
        yield* listed({ host_url: "https://github.com/octo-org/gadget", price_usd: "1.00", wallet_solana: SOLANA_WALLET }, key)
        yield* listed({ host_url: "https://github.com/evil-org/payload", price_usd: "2.00", wallet_base: BASE_WALLET }, key)
        // Not selling: no price; and one taken down.
        yield* listed({ host_url: "https://github.com/other-org/unpriced", wallet_base: BASE_WALLET }, key)
        yield* listed({ host_url: "https://github.com/gone-org/gone", price_usd: "3.00", wallet_base: BASE_WALLET }, key)
        expect((yield* call("DELETE", "/repos/gone-org/gone", { token: key })).status).toBe(204)
        // A listing the API cannot make (the code host's names are tame), to prove the XML is escaped anyway.
        const store = yield* ListingStore
        const at = new Date("2026-01-02T03:04:05.000Z")
        yield* store.insert(new Listing({
          id: ListingId.make("lst_sitemap_escape"),
          repo: new RepoRef({ owner: "a&b", name: "<x>'\"" }),
          accountId: AccountId.make("acc_nobody"),
          hostUrl: "https://github.com/a/b",
          isPrivate: false,
          description: null,
          language: null,
          price: AtomicAmount.make(1_000_000n),
          payTo: { base: BASE_ADDRESS, solana: null },
          hostPat: null,
          checkoutId: CheckoutId.make("chk_sitemap_escape"),
          status: "live",
          createdAt: at,
          updatedAt: at,
          takenDownAt: null
        }))

        // One reading of the listings serves the sitemap for a minute (a burst of requests is one scan).
        expect(locs((yield* call("GET", "/sitemap.xml")).text)).toEqual([])
        yield* TestClock.adjust(SITEMAP_MEMO_MS + 1)
        const reply = yield* call("GET", "/sitemap.xml")
        expect(reply.status).toBe(200)
        expect(reply.headers["cache-control"]).toMatch(/^public, max-age=\d+$/)
        expect(locs(reply.text)).toEqual([
          `${BASE_URL}/r/a%26b`,
          `${BASE_URL}/r/a%26b/%3Cx%3E&apos;%22`,
          `${BASE_URL}/r/Evil-Org`,
          `${BASE_URL}/r/Evil-Org/payload`,
          `${BASE_URL}/r/Octo-Org`,
          `${BASE_URL}/r/Octo-Org/Gadget`,
          `${BASE_URL}/r/Octo-Org/Widget`
        ])
        expect(reply.text).not.toMatch(/unpriced|Gone-Org|gone/)
        expect(reply.text).toContain(`<lastmod>${at.toISOString()}</lastmod>`)
        // No raw markup from a name anywhere in the document.
        expect(reply.text).not.toMatch(/<x>|a&b/)
        // With 50 000 URLs or fewer there is no index, so no numbered file.
        expect((yield* call("GET", "/sitemaps/1.xml")).status).toBe(404)
        expect((yield* call("GET", "/sitemaps/..%2Fetc.xml")).status).toBe(404)
      }))

    it.effect("llms.txt tells an agent how to find and buy, with absolute links; the OpenAPI document links to it", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/llms.txt")
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toBe("text/plain; charset=utf-8")
        const text = reply.text
        expect(text.split("\n")[0]).toBe("# repomarket")
        for (const fact of [
          `(${BASE_URL}/listings)`,
          `(${BASE_URL}/sitemap.xml)`,
          `${BASE_URL}/r/<owner>/<repo>`,
          "402 Payment Required",
          "PAYMENT-REQUIRED",
          "eip155:8453",
          "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
          "@x402/fetch",
          "setSpendControls",
          "test_checkout_url",
          "application/gzip",
          `rel="receipt"`,
          "payment-identifier",
          "sign-in-with-x",
          "bazaar",
          `(${BASE_URL}/openapi.json)`
        ]) expect(text, fact).toContain(fact)

        const spec = (yield* call("GET", "/openapi.json")).json
        expect(spec.externalDocs).toEqual({ url: `${BASE_URL}/llms.txt`, description: expect.any(String) })
        expect(spec.info.description).toContain(`${BASE_URL}/llms.txt`)
      }))
  })
})

describe("the repo page's link preview and structured data", () => {
  layer(TestApp({ repos: REPOS }))((it) => {
    it.effect("OpenGraph and Twitter meta carry title, description and price; JSON-LD is a Product with a USDC Offer", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("preview@example.com")
        yield* listed({ host_url: "https://github.com/octo-org/widget", price_usd: "12.34", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/octo-org/widget"), 200)
        const head = page.slice(0, page.indexOf("</head>"))
        const url = `${BASE_URL}/r/Octo-Org/Widget`
        const description = "A widget library $12.34 USDC on Base or Solana, paid over x402; the source as a .tar.gz."
        expect(head).toContain(`<link rel="canonical" href="${url}">`)
        expect({
          description: meta(head, "description"),
          type: meta(head, "og:type"),
          title: meta(head, "og:title"),
          ogDescription: meta(head, "og:description"),
          ogUrl: meta(head, "og:url"),
          amount: meta(head, "product:price:amount"),
          currency: meta(head, "product:price:currency"),
          card: meta(head, "twitter:card"),
          twitterTitle: meta(head, "twitter:title"),
          price: meta(head, "twitter:data1")
        }).toEqual({
          description,
          type: "product",
          title: "Octo-Org/Widget · repomarket",
          ogDescription: description,
          ogUrl: url,
          amount: "12.34",
          currency: "USD",
          card: "summary",
          twitterTitle: "Octo-Org/Widget · repomarket",
          price: "$12.34 USDC"
        })
        expect(jsonLd(head)).toEqual([{
          "@context": "https://schema.org",
          "@type": "Product",
          name: "Octo-Org/Widget",
          description,
          url,
          sku: "Octo-Org/Widget",
          brand: { "@type": "Brand", name: "Octo-Org" },
          category: "Source code repository",
          keywords: "library",
          offers: {
            "@type": "Offer",
            url,
            price: "12.34",
            priceCurrency: "USDC",
            availability: "https://schema.org/InStock",
            itemCondition: "https://schema.org/NewCondition",
            acceptedPaymentMethod: ["USDC on Base (x402)", "USDC on Solana (x402)"]
          }
        }])
      }))

    it.effect("a description holding </script>, quotes and markup stays text in the meta tags and the JSON-LD", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("evil@example.com")
        yield* listed({ host_url: "https://github.com/evil-org/payload", price_usd: "0.50", wallet_base: BASE_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/evil-org/payload"), 200)
        const head = page.slice(0, page.indexOf("</head>"))
        // One data block and our nonce'd script: the description opened no element and closed none.
        expect(head.match(/<script\b[^>]*>/g)).toEqual([`<script type="application/ld+json">`, expect.stringMatching(/^<script src="\/assets\/copy\.js" nonce=/)])
        expect(page.match(/<\/script>/g)).toHaveLength(2)
        expect(page).not.toContain("<script>window.__pwned")
        expect(page).not.toContain("<!-- x -->")
        const [product] = jsonLd(head)
        const expected = `${EVIL_DESCRIPTION.replace(/\s+/g, " ").trim()} $0.50 USDC on Base, paid over x402; the source as a .tar.gz.`
        expect(product.description).toBe(expected)
        expect(product.keywords).toBe("cli, <b>x</b>")
        expect(meta(head, "og:description")).toBe(expected)
        expect(meta(head, "twitter:description")).toBe(expected)
      }))

    it.effect("a listing that is not selling says so and offers nothing", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("unpriced@example.com")
        yield* listed({ host_url: "https://github.com/other-org/unpriced", wallet_base: BASE_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/other-org/unpriced"), 200)
        expect(meta(page, "og:type")).toBe("website")
        expect(meta(page, "og:description")).toBe("no price yet Not on sale right now.")
        expect(meta(page, "product:price:amount")).toBeUndefined()
        expect(meta(page, "twitter:data1")).toBeUndefined()
        expect(jsonLd(page)[0].offers).toBeUndefined()
      }))
  })
})

import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option, Ref } from "effect"
import { Sitemap, type SitemapPage, URLS_PER_SITEMAP } from "../../domain/usecases/Sitemap.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { problemResponse } from "../Guard.js"
import { problemBody } from "../Problem.js"
import { llmsTxt } from "./LlmsTxt.js"
import { wellKnownX402Route } from "./WellKnownX402.js"
import { storageAsDefect } from "../Unavailable.js"

/** XML text and attribute escaping: owner and repo names come from the code host. */
const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;" })[c]!)

/** Each path segment percent-encoded, so a URL in the sitemap is always one valid URL. */
const pageUrl = (baseUrl: string, path: string): string =>
  baseUrl + path.split("/").map((segment) => encodeURIComponent(segment)).join("/")

const XML_HEAD = `<?xml version="1.0" encoding="UTF-8"?>\n`
const NS = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`

const urlset = (baseUrl: string, pages: ReadonlyArray<SitemapPage>): string =>
  XML_HEAD + `<urlset ${NS}>\n` +
  pages.map((p) => `<url><loc>${escapeXml(pageUrl(baseUrl, p.path))}</loc><lastmod>${p.lastModified.toISOString()}</lastmod></url>\n`).join("") +
  `</urlset>\n`

const sitemapIndex = (baseUrl: string, pages: ReadonlyArray<SitemapPage>, perFile: number): string => {
  const files: Array<string> = []
  for (let n = 1; (n - 1) * perFile < pages.length; n++) {
    const part = pages.slice((n - 1) * perFile, n * perFile)
    const newest = part.reduce((max, p) => (p.lastModified > max ? p.lastModified : max), part[0]!.lastModified)
    files.push(`<sitemap><loc>${escapeXml(`${baseUrl}/sitemaps/${n}.xml`)}</loc><lastmod>${newest.toISOString()}</lastmod></sitemap>\n`)
  }
  return XML_HEAD + `<sitemapindex ${NS}>\n` + files.join("") + `</sitemapindex>\n`
}

/** `/sitemap.xml`: every page in one `urlset`, or past `perFile` URLs an index of numbered files. */
export const sitemapXml = (baseUrl: string, pages: ReadonlyArray<SitemapPage>, perFile = URLS_PER_SITEMAP): string =>
  pages.length > perFile ? sitemapIndex(baseUrl, pages, perFile) : urlset(baseUrl, pages)

/**
 * `/sitemaps/<n>.xml` (`file` as requested): the n-th `perFile` pages, or null when there is no such file
 * (not a number, out of range, or no index at all because everything fits in `/sitemap.xml`).
 */
export const sitemapFileXml = (
  baseUrl: string,
  pages: ReadonlyArray<SitemapPage>,
  file: string,
  perFile = URLS_PER_SITEMAP
): string | null => {
  if (!/^[1-9][0-9]{0,5}\.xml$/.test(file) || pages.length <= perFile) return null
  const n = Number.parseInt(file, 10)
  const part = pages.slice((n - 1) * perFile, n * perFile)
  return part.length === 0 ? null : urlset(baseUrl, part)
}

// Crawlers come back daily at most; an hour keeps a new listing from waiting long and a crawl burst cheap.
const PUBLIC_CACHE = "public, max-age=3600"

const textAnswer = (body: string, contentType: string, cache = PUBLIC_CACHE) =>
  HttpServerResponse.text(body, {
    contentType,
    headers: { "cache-control": cache, "x-content-type-options": "nosniff" }
  })

const xml = (body: string) => textAnswer(body, "application/xml; charset=utf-8")

/**
 * What keeps crawlers to the public pages: the checkout answers 402 to anything but a payment, receipts are
 * bearer links to paid goods, sign-in, the dashboard and the management API are per person, and the catalog's
 * query combinations are endless (the sitemap lists every page they lead to; `/listings` itself stays open).
 */
export const robotsTxt = (baseUrl: string): string =>
  [
    "# repomarket: the owner and repo pages are public; buying is for x402 clients (see /llms.txt).",
    "User-agent: *",
    "Disallow: /checkout/",
    "Disallow: /downloads/",
    "Disallow: /dashboard",
    "Disallow: /auth/",
    "Disallow: /signin",
    "Disallow: /signout",
    "Disallow: /my/",
    "Disallow: /listings?",
    "Allow: /",
    "",
    `Sitemap: ${baseUrl}/sitemap.xml`,
    ""
  ].join("\n")

const notFound = problemResponse(problemBody(404, "not_found", "Not found", "No such sitemap file; /sitemap.xml lists them."))

/**
 * How long one reading of the selling listings serves the sitemap: the query reads every selling listing, so a
 * burst of sitemap requests must not become a burst of full scans. A new listing waits at most this long (the
 * answers say `max-age=3600` to crawlers anyway). Only a successful reading is kept.
 */
export const SITEMAP_MEMO_MS = 60_000

/** How long a client or cache may keep `/.well-known/x402` (the server reads the catalog for it once a minute). */
const WELL_KNOWN_CACHE = "public, max-age=300"

/**
 * `/robots.txt`, `/sitemap.xml` (the owner and repo pages of the selling listings; past 50 000 URLs an
 * index of `/sitemaps/<n>.xml` files of 50 000 each), `/llms.txt` (how an agent buys here) and `/.well-known/x402`
 * (the host's x402 manifest, see WellKnownX402.ts; public data, so any origin may read it).
 */
export const discoveryRoutes = Effect.gen(function*() {
  const { baseUrl } = yield* PublicOrigin
  const sitemap = yield* storageAsDefect(Sitemap)
  const memo = yield* Ref.make(Option.none<{ readonly at: number; readonly pages: ReadonlyArray<SitemapPage> }>())
  const pages = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const kept = yield* Ref.get(memo)
    if (Option.isSome(kept) && now - kept.value.at < SITEMAP_MEMO_MS) return kept.value.pages
    const fresh = yield* sitemap.pages()
    yield* Ref.set(memo, Option.some({ at: now, pages: fresh }))
    return fresh
  })
  const manifest = yield* wellKnownX402Route
  const robots = robotsTxt(baseUrl)
  const llms = llmsTxt(baseUrl)

  const sitemapFile = Effect.gen(function*() {
    const { file } = yield* HttpRouter.params
    const body = sitemapFileXml(baseUrl, yield* pages, file ?? "")
    return body === null ? notFound : xml(body)
  })

  return {
    robots: Effect.succeed(textAnswer(robots, "text/plain; charset=utf-8", "public, max-age=86400")),
    llms: Effect.succeed(textAnswer(llms, "text/plain; charset=utf-8")),
    sitemapXml: Effect.map(pages, (all) => xml(sitemapXml(baseUrl, all))),
    sitemapFile,
    wellKnownX402: Effect.map(manifest, (m) =>
      HttpServerResponse.unsafeJson(m, { headers: { "cache-control": WELL_KNOWN_CACHE, "access-control-allow-origin": "*", "x-content-type-options": "nosniff" } }))
  }
})

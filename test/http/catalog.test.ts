import { describe, expect, layer } from "@effect/vitest"
import { Effect, Encoding, Layer, TestClock } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { call, DEFAULT_REPOS, signInWithKey, TestApp } from "../support/app.js"
import { CATALOG_REPOS, listingBody } from "../support/catalog.js"
import { expectProblem, fieldsOf, listed } from "../support/flows.js"
import { BROWSER_ACCEPT, expectPage, htmlGet } from "../support/pages.js"
import { pgliteTestDatabase } from "../support/pglite.js"

/*
 * GET /listings and GET / through HTTP: every parameter's bad values are a 400 naming it; query text shaped
 * like SQL or tsquery syntax is only words (run on PGlite too, where it would matter); an empty market; search,
 * filters, paging, and a takedown and a reprice seen at once.
 */

const JSON_ACCEPT = { accept: "application/json" }
/** Listed by an account in the last test, so it can be repriced and taken down. */
const LATE = { owner: "acme", name: "late-tool", language: "Go", topics: ["cli"], description: "Late", files: { "README.md": "# late" }, wallet: "base" as const }
const get = (path: string) => call("GET", path, { headers: JSON_ACCEPT })
const names = (reply: { json: any }) => (reply.json.listings as Array<{ repo: string }>).map((l) => l.repo)
const b64 = (value: unknown) => Encoding.encodeBase64Url(JSON.stringify(value))

const BAD: ReadonlyArray<readonly [string, string]> = [
  ["q", "x".repeat(201)], ["q", "a\u0000b"], ["q", "line\nbreak"], ["q", "\u0007"],
  ["language", "<script>"], ["language", "L".repeat(51)], ["language", "C\u0000"], ["language", "'; DROP TABLE listings; --"],
  ["category", "nope"], ["category", "web' OR '1'='1"], ["category", "other)"],
  ["topic", "Has Space"], ["topic", "-leading"], ["topic", "t".repeat(51)], ["topic", "a_b"], ["topic", "cli' --"],
  ["chain", "ethereum"], ["chain", "base;"], ["chain", "BASE,solana"],
  ["max_price_usd", "-1"], ["max_price_usd", "0"], ["max_price_usd", "0.00"], ["max_price_usd", "1e3"], ["max_price_usd", "12.345"],
  ["max_price_usd", "100000.01"], ["max_price_usd", "abc"], ["max_price_usd", "NaN"], ["max_price_usd", "Infinity"], ["max_price_usd", "$5"],
  ["sort", "popular"], ["sort", "price desc"], ["sort", "1"],
  ["cursor", "garbage!"], ["cursor", "xyz"], ["cursor", "x".repeat(301)],
  ["cursor", b64([1, "price", "5", "lst_abc"])], // a cursor of another sort (the default here is newest)
  ["cursor", b64([1, "newest", 1700000000000, "lst_'; DROP"])], // a tampered id
  ["cursor", b64([1, "newest", -5, "lst_abc"])], ["cursor", b64([1, "newest", "soon", "lst_abc"])],
  ["cursor", b64([2, "newest", 1700000000000, "lst_abc"])], ["cursor", b64({ sort: "newest" })],
  ["limit", "0"], ["limit", "101"], ["limit", "-1"], ["limit", "1.5"], ["limit", "ten"], ["limit", "1e2"], ["limit", "0x10"]
]

const INJECTIONS = [
  "' OR 1=1 --", "parser' OR '1'='1", "'; DROP TABLE listings; --", "a & | ! ( ) :* <-> <2>", "\"unclosed phrase", "\\",
  "%_%", "$1", "parser:*", "!parser", "(parser", "日本語 🙂", "-", "or or or", "the", "' UNION SELECT host_pat FROM listings --"
]

/** The catalog's repos listed anonymously, a second apart, so "newest" has one answer. */
const seedCatalog = Effect.forEach(CATALOG_REPOS, (r) => Effect.zipRight(listed(listingBody(r)), TestClock.adjust("1 second")), { discard: true })

const catalogSuite = (backend: string, app: ReturnType<typeof TestApp>) =>
  describe(`catalog over HTTP [${backend}]`, () => {
    // An app of its own: the other tests list repos, in whatever order they run.
    layer(app)((it) => {
      it.effect("an empty market: no listings, no next page, every category at 0, pages that say so", () =>
        Effect.gen(function*() {
          const empty = yield* get("/listings")
          expect(empty.status).toBe(200)
          expect(empty.json).toMatchObject({ listings: [], next_cursor: null, next: null, query: { sort: "newest", limit: 20 } })
          const home = yield* get("/")
          expect(home.status).toBe(200)
          expect(home.json.newest).toStrictEqual([])
          expect(home.json.categories.every((c: { count: number }) => c.count === 0)).toBe(true)
          expect(home.json.llms_txt).toBe("/llms.txt")
          expect(expectPage(yield* htmlGet("/"), 200)).toContain("Nothing is for sale yet")
          expect(expectPage(yield* htmlGet("/listings?q=anything"), 200)).toContain("Nothing for sale matches")
        }))
    })

    layer(app)((it) => {

      it.effect("every bad value of every parameter is a 400 problem naming that parameter, for agents and browsers", () =>
        Effect.gen(function*() {
          for (const [param, value] of BAD) {
            const reply = yield* get(`/listings?${new URLSearchParams({ [param]: value })}`)
            expectProblem(reply, 400, "invalid_request")
            expect(fieldsOf(reply), `${param}=${value}`).toStrictEqual([param])
          }
          // Several bad parameters: one 400 naming each.
          const several = yield* get("/listings?chain=eth&limit=0&sort=up")
          expect(fieldsOf(several).sort()).toStrictEqual(["chain", "limit", "sort"])
          // Unknown and repeated parameters are refused, not ignored.
          expect(fieldsOf(yield* get("/listings?max_price=5"))).toStrictEqual(["max_price"])
          expect(fieldsOf(yield* get("/listings?chain=base&chain=solana"))).toContain("chain")
          const page = yield* htmlGet("/listings?max_price_usd=cheap")
          expect(expectPage(page, 400)).toContain("max_price_usd")
        }))

      it.effect("lists the selling repos, searches, filters, sorts and pages", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const all = yield* get("/listings")
          expect(all.status).toBe(200)
          // Not priced: not in the catalog. Newest first.
          expect(names(all)).toStrictEqual(["acme/evil-widget", "acme/notes-app", "acme/rusty-cli", "acme/fast-json-parser"])
          const first = all.json.listings[3]
          expect(first).toMatchObject({
            page: "/r/acme/fast-json-parser", price_usd: "12.00", chains: ["base"], language: "TypeScript",
            topics: ["json", "parser", "library"], stars: 120, category: "library", rank: null
          })
          expect(first.checkout_url).toMatch(/^http:\/\/repomarket\.test\/checkout\/chk_/)

          // The name match first, the README mention after it; the unpriced one never.
          const parser = yield* get("/listings?q=parser")
          expect(names(parser)).toStrictEqual(["acme/fast-json-parser", "acme/notes-app"])
          expect(parser.json.query.sort).toBe("relevance")
          expect(parser.json.listings[0].rank).toBeGreaterThan(parser.json.listings[1].rank)
          expect(names(yield* get("/listings?q=toolbox"))).toStrictEqual(["acme/rusty-cli"])

          expect(names(yield* get("/listings?language=rust"))).toStrictEqual(["acme/rusty-cli"])
          expect(names(yield* get("/listings?category=cli"))).toStrictEqual(["acme/rusty-cli"])
          expect(names(yield* get("/listings?topic=json"))).toStrictEqual(["acme/fast-json-parser"])
          expect(names(yield* get("/listings?chain=solana"))).toStrictEqual(["acme/rusty-cli"])
          expect(names(yield* get("/listings?max_price_usd=12&sort=price"))).toStrictEqual(["acme/evil-widget", "acme/rusty-cli", "acme/fast-json-parser"])
          expect(names(yield* get("/listings?sort=stars"))).toStrictEqual(["acme/fast-json-parser", "acme/rusty-cli", "acme/notes-app", "acme/evil-widget"])
          // Empty values (a browser form sends every field) count as absent.
          expect(names(yield* get("/listings?q=&category=&chain=&sort=price&language=&max_price_usd="))).toHaveLength(4)

          // Pages of one by `next`, without repeats, to the end.
          const seen: Array<string> = []
          let next: string | null = "/listings?sort=price&limit=1"
          while (next !== null) {
            const page: { json: any } = yield* get(next)
            seen.push(...names(page))
            next = page.json.next
          }
          expect(seen).toStrictEqual(["acme/evil-widget", "acme/rusty-cli", "acme/fast-json-parser", "acme/notes-app"])

          // Browsers get the same results as a page; seller text is escaped, never markup.
          const html = expectPage(yield* htmlGet("/listings?q=widget"), 200)
          expect(html).toContain("acme/evil-widget")
          expect(html).toContain("&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;")
          expect(html).not.toContain("<script>alert")
          expect(html).not.toContain("<img src=x")
          const home = expectPage(yield* htmlGet("/"), 200)
          expect(home).toContain("/r/acme/rusty-cli")
          expect(home).toContain("href=\"/llms.txt\"")
          expect(home).not.toContain("<script>alert")
          expect(home).toMatch(/href="\/listings\?category=cli">cli<\/a> <span class="count">1<\/span>/)
          expect((yield* call("GET", "/listings", { headers: { accept: BROWSER_ACCEPT } })).headers["vary"]).toBe("Accept")
        }))

    })

    // Each test below lists the catalog in an app of its own: they change it, in whichever order they run.
    layer(app)((it) => {
      it.effect("query text shaped like SQL or tsquery syntax is only words: 200, never a 5xx, nothing leaked", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          for (const q of INJECTIONS) {
            const reply = yield* get(`/listings?${new URLSearchParams({ q })}`)
            expect(reply.status, `q=${q}: ${reply.text.slice(0, 200)}`).toBe(200)
            expect(reply.text).not.toContain("v1.") // no sealed token or anything like it
            for (const l of reply.json.listings) expect(Object.keys(l)).not.toContain("host_pat")
          }
          // Read as words: "parser" or "1", nothing more.
          const words = names(yield* get(`/listings?${new URLSearchParams({ q: "parser' OR '1'='1" })}`))
          expect(words).toEqual(expect.arrayContaining(["acme/fast-json-parser", "acme/notes-app"]))
          expect(words).not.toContain("acme/rusty-cli")
          // Still all there afterwards.
          expect(names(yield* get("/listings"))).toHaveLength(4)
        }))

    })

    layer(app)((it) => {
      it.effect("a takedown and a reprice show at once", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const { key } = yield* signInWithKey(`seller-${backend}@example.com`)
          yield* listed({ ...listingBody(LATE), price_usd: "2.00" }, key)
          expect(names(yield* get("/listings?sort=price&limit=2"))).toStrictEqual(["acme/evil-widget", "acme/late-tool"])
          const repriced = yield* call("PATCH", "/repos/acme/late-tool", { token: key, body: { price_usd: "0.50" } })
          expect(repriced.status, repriced.text).toBe(200)
          const cheapest = yield* get("/listings?sort=price&limit=2")
          expect(names(cheapest)).toStrictEqual(["acme/late-tool", "acme/evil-widget"])
          expect(cheapest.json.listings[0].price_usd).toBe("0.50")
          expect((yield* call("DELETE", "/repos/acme/late-tool", { token: key })).status).toBe(204)
          expect(names(yield* get("/listings?sort=price&limit=2"))).toStrictEqual(["acme/evil-widget", "acme/rusty-cli"])
          expect(names(yield* get("/listings?q=late"))).toStrictEqual([])
        }))
    })
  })

catalogSuite("memory", TestApp({ repos: [...DEFAULT_REPOS, ...CATALOG_REPOS, LATE] }))
catalogSuite("pglite", TestApp({ repos: [...DEFAULT_REPOS, ...CATALOG_REPOS, LATE], storage: StorageSql.pipe(Layer.provide(pgliteTestDatabase())) }))

describe("catalog: limits and documentation", () => {
  layer(TestApp({ config: { PUBLIC_PAGES_PER_MINUTE: "3" } }))((it) => {
    it.effect("counts /listings and / with the public pages (429 with Retry-After) and documents both in OpenAPI", () =>
      Effect.gen(function*() {
        expect((yield* get("/listings")).status).toBe(200)
        expect((yield* get("/")).status).toBe(200)
        expect((yield* get("/r/Octo-Org")).status).toBe(200)
        const refused = expectProblem(yield* get("/listings?q=x"), 429, "rate_limited")
        expect(Number(refused["retry_after_seconds"])).toBeGreaterThan(0)
        expect((yield* htmlGet("/")).status).toBe(429)
        const spec = (yield* call("GET", "/openapi.json")).json
        expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(["/listings", "/"]))
        const names = spec.paths["/listings"].get.parameters.map((p: { name: string }) => p.name)
        expect(names).toEqual(expect.arrayContaining(["q", "language", "category", "topic", "chain", "max_price_usd", "sort", "cursor", "limit"]))
      }))
  })
})

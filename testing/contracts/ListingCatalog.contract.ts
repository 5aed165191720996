import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import type { CatalogFacts, CatalogPage, CatalogQuery } from "../../domain/Catalog.js"
import { RepoRef } from "../../domain/Ids.js"
import { Listing } from "../../domain/Listing.js"
import { AtomicAmount } from "../../domain/Money.js"
import type { Category } from "../../domain/rules/Category.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { aListing, BASE_ADDRESS, SOLANA_ADDRESS, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

/*
 * The catalog's guarantees, for any adapter. Tests share one database, so each one marks its listings with a
 * fresh topic (or word) and searches only for that: listings of other tests never match.
 */

const query = (fields: Partial<CatalogQuery>): CatalogQuery => ({
  text: null, language: null, category: null, topic: null, chain: null, maxPrice: null, sort: "newest", after: null, limit: 20, ...fields
})

const facts = (fields: Partial<CatalogFacts> = {}): CatalogFacts => ({ topics: [], stars: 0, category: "library", readmeText: "", ...fields })

const usd = (dollars: number) => AtomicAmount.make(BigInt(Math.round(dollars * 100)) * 10_000n)

/** A fresh lowercase word no other test uses: a topic and a search term at once. */
const word = () => `w${unique()}`

const repos = (page: CatalogPage) => page.entries.map((e) => e.listing.repo.name)

/** Stores a listing and its facts, as listing a repo does. */
const list = (listing: Listing, recorded: CatalogFacts) =>
  Effect.gen(function*() {
    yield* (yield* ListingStore).insert(listing)
    yield* (yield* ListingCatalog).describe(listing, recorded)
    return listing
  })

/** Every page of a query, following `next`, with `between` run after each page (e.g. inserting listings). */
const allPages = (q: CatalogQuery, between: (page: number) => Effect.Effect<void, unknown, ListingStore | ListingCatalog> = () => Effect.void) =>
  Effect.gen(function*() {
    const catalog = yield* ListingCatalog
    const seen: Array<string> = []
    let after = q.after
    for (let n = 0; n < 100; n++) {
      const page = yield* catalog.search({ ...q, after })
      seen.push(...page.entries.map((e) => e.listing.id))
      if (page.next === null) return seen
      after = page.next
      yield* between(n)
    }
    throw new Error("more than 100 pages")
  })

export const ListingCatalogContract = (it: ContractIt<ListingStore | ListingCatalog>, _backend: Backend) =>
  describe("ListingCatalog", () => {
    it.effect("shows only selling listings: live, priced, with a payout address", () =>
      Effect.gen(function*() {
        const catalog = yield* ListingCatalog
        const topic = word()
        const f = facts({ topics: [topic] })
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "selling" }) }), f)
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "solana-only" }), payTo: { base: null, solana: SOLANA_ADDRESS } }), f)
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "unpriced" }), price: null }), f)
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "no-wallet" }), payTo: { base: null, solana: null } }), f)
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "down" }), status: "taken_down", takenDownAt: new Date(), hostPat: null }), f)
        expect(repos(yield* catalog.search(query({ topic })))).toStrictEqual(expect.arrayContaining(["selling", "solana-only"]))
        expect((yield* catalog.search(query({ topic }))).entries).toHaveLength(2)
        expect(repos(yield* catalog.search(query({ text: topic })))).toHaveLength(2)
      }))

    it.effect("filters by language (any case), category, topic, chain and highest price (inclusive)", () =>
      Effect.gen(function*() {
        const catalog = yield* ListingCatalog
        const topic = word()
        const mk = (name: string, fields: Partial<ConstructorParameters<typeof Listing>[0]>, category: Category) =>
          list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name }), ...fields }), facts({ topics: [topic, `${topic}-${name}`], category }))
        yield* mk("ts-base-10", { language: "TypeScript", price: usd(10), payTo: { base: BASE_ADDRESS, solana: null } }, "library")
        yield* mk("rust-sol-20", { language: "Rust", price: usd(20), payTo: { base: null, solana: SOLANA_ADDRESS } }, "cli")
        yield* mk("cpp-both-30", { language: "C++", price: usd(30), payTo: { base: BASE_ADDRESS, solana: SOLANA_ADDRESS } }, "games")
        const names = (q: Partial<CatalogQuery>) => Effect.map(catalog.search(query({ topic, sort: "price", ...q })), repos)
        expect(yield* names({})).toStrictEqual(["ts-base-10", "rust-sol-20", "cpp-both-30"])
        expect(yield* names({ language: "typescript" })).toStrictEqual(["ts-base-10"])
        expect(yield* names({ language: "C++" })).toStrictEqual(["cpp-both-30"])
        expect(yield* names({ language: "Go" })).toStrictEqual([])
        expect(yield* names({ category: "cli" })).toStrictEqual(["rust-sol-20"])
        expect(yield* names({ chain: "base" })).toStrictEqual(["ts-base-10", "cpp-both-30"])
        expect(yield* names({ chain: "solana" })).toStrictEqual(["rust-sol-20", "cpp-both-30"])
        expect(yield* names({ maxPrice: usd(20) })).toStrictEqual(["ts-base-10", "rust-sol-20"])
        expect(yield* names({ maxPrice: usd(19.99) })).toStrictEqual(["ts-base-10"])
        expect(yield* names({ topic: `${topic}-rust-sol-20` })).toStrictEqual(["rust-sol-20"])
        expect(yield* names({ chain: "base", maxPrice: usd(100), category: "games", language: "c++" })).toStrictEqual(["cpp-both-30"])
      }))

    it.effect("searches the name, description, topics and README; a name match ranks above a description, a description above a README", () =>
      Effect.gen(function*() {
        const catalog = yield* ListingCatalog
        const term = word()
        const owner = () => `o${unique()}`
        // The README mentions the word many times: still below a single mention in the name.
        yield* list(aListing({ repo: new RepoRef({ owner: owner(), name: "readme-only" }), description: "A utility" }),
          facts({ readmeText: `Install it. ${Array.from({ length: 30 }, () => `${term} works`).join(". ")}` }))
        yield* list(aListing({ repo: new RepoRef({ owner: owner(), name: `${term}-kit` }), description: "Plain tools" }), facts())
        yield* list(aListing({ repo: new RepoRef({ owner: owner(), name: "described" }), description: `The ${term} for teams` }), facts())
        yield* list(aListing({ repo: new RepoRef({ owner: owner(), name: "topical" }), description: "Other" }), facts({ topics: [term] }))
        yield* list(aListing({ repo: new RepoRef({ owner: owner(), name: "unrelated" }), description: "Nothing" }), facts({ readmeText: "nothing here" }))
        const found = yield* catalog.search(query({ text: term, sort: "relevance" }))
        const names = repos(found)
        expect(names).toHaveLength(4)
        expect(names[0]).toBe(`${term}-kit`)
        expect(names[3]).toBe("readme-only")
        expect(names.slice(1, 3).sort()).toStrictEqual(["described", "topical"])
        const ranks = found.entries.map((e) => e.rank!)
        expect([...ranks].sort((a, b) => b - a)).toStrictEqual(ranks)
        // Words are ANDed; a leading minus excludes.
        expect(repos(yield* catalog.search(query({ text: `${term} teams`, sort: "relevance" })))).toStrictEqual(["described"])
        expect(repos(yield* catalog.search(query({ text: `${term} -teams -tools -works`, sort: "relevance" })))).toStrictEqual(["topical"])
        // Other orders keep the text as a filter.
        expect((yield* catalog.search(query({ text: term, sort: "newest" }))).entries).toHaveLength(4)
      }))

    it.effect("ranks by class: the name matching the whole query, then name with description and topics, then the README; by id within a class, across pages", () =>
      Effect.gen(function*() {
        const term = word()
        const other = word()
        const owner = () => `o${unique()}`
        const mk = (name: string, description: string, readmeText: string) =>
          list(aListing({ repo: new RepoRef({ owner: owner(), name }), description }), facts({ readmeText }))
        const named = yield* Effect.forEach([1, 2, 3], (i) => mk(`${term}-${other}-${i}`, "Tools", ""))
        // Both words needed: one in the name, the other in the description (or a topic) makes class 1, not 2.
        const described = yield* Effect.forEach([1, 2, 3], (i) => mk(`${term}-half-${i}`, `For ${other} teams`, ""))
        const readme = yield* Effect.forEach([1, 2, 3], (i) => mk(`plain-${i}`, `For ${other} teams`, `Uses ${term} inside`))
        yield* mk(`${term}-alone`, "Nothing else", "") // the other word nowhere: no match
        const byIdDesc = (ls: ReadonlyArray<Listing>) => [...ls].map((l) => l.id).sort().reverse()
        const expected = [...byIdDesc(named), ...byIdDesc(described), ...byIdDesc(readme)]
        const catalog = yield* ListingCatalog
        const whole = yield* catalog.search(query({ text: `${term} ${other}`, sort: "relevance" }))
        expect(whole.entries.map((e) => e.listing.id)).toStrictEqual(expected)
        expect(whole.entries.map((e) => e.rank)).toStrictEqual([2, 2, 2, 1, 1, 1, 0, 0, 0])
        for (const limit of [1, 2, 4]) {
          expect(yield* allPages(query({ text: `${term} ${other}`, sort: "relevance", limit }))).toStrictEqual(expected)
        }
        // An excluded word is checked against the whole document: the README's mention excludes.
        expect(repos(yield* catalog.search(query({ text: `${other} -${term}`, sort: "relevance" })))).toStrictEqual([])
        expect(repos(yield* catalog.search(query({ text: `${term} -inside`, sort: "relevance" })))).toHaveLength(7)
      }))

    it.effect("orders relevance without text by id, across pages (the use case asks for newest instead; an embedder may not)", () =>
      Effect.gen(function*() {
        const topic = word()
        const listed = yield* Effect.forEach([1, 2, 3], (i) =>
          list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: `${topic}-${i}` }) }), facts({ topics: [topic] })))
        const expected = listed.map((l) => l.id).sort().reverse()
        const catalog = yield* ListingCatalog
        expect((yield* catalog.search(query({ topic, sort: "relevance" }))).entries.map((e) => e.listing.id)).toStrictEqual(expected)
        expect(yield* allPages(query({ topic, sort: "relevance", limit: 1 }))).toStrictEqual(expected)
      }))

    it.effect("treats query text as words only: SQL, tsquery operators and quotes find nothing and break nothing", () =>
      Effect.gen(function*() {
        const catalog = yield* ListingCatalog
        const term = word()
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: `${term}` }) }), facts())
        for (const text of ["' OR 1=1 --", `${term}' OR '1'='1`, "a & | ! ( ) :* <->", "\"unclosed", "'; DROP TABLE listings; --", "\\", "%_%", "日本語 🙂", "-", "or or or", "the"]) {
          const page = yield* catalog.search(query({ text, sort: "relevance" }))
          expect(page.entries.every((e) => e.listing.repo.name !== term) || text.includes(term)).toBe(true)
        }
        expect(repos(yield* catalog.search(query({ text: term, sort: "relevance" })))).toStrictEqual([term])
      }))

    it.effect("a query of only excluded words is no text plus exclusions: no rank, by id, every match once across pages, filters first", () =>
      Effect.gen(function*() {
        const topic = word()
        const banned = word()
        const owner = () => `o${unique()}`
        const listed = yield* Effect.forEach(Array.from({ length: 7 }, (_, i) => i), (i) =>
          list(
            aListing({ repo: new RepoRef({ owner: owner(), name: `${topic}-${i}` }), language: i % 2 === 0 ? "Rust" : "Go" }),
            // Every third one says the excluded word, in its README only.
            facts({ topics: [topic], readmeText: i % 3 === 0 ? `Uses ${banned} inside` : "Plain" })
          ))
        const kept = listed.filter((_, i) => i % 3 !== 0)
        const byIdDesc = (ls: ReadonlyArray<Listing>) => ls.map((l) => l.id).sort().reverse()
        const catalog = yield* ListingCatalog
        const first = yield* catalog.search(query({ topic, text: `-${banned}`, sort: "relevance", limit: 10 }))
        expect(first.entries.every((e) => e.rank === null)).toBe(true)
        for (const limit of [1, 2, 10]) {
          expect(yield* allPages(query({ topic, text: `-${banned}`, sort: "relevance", limit }))).toStrictEqual(byIdDesc(kept))
          expect(yield* allPages(query({ topic, text: `-${banned} -nothing-${banned}`, sort: "newest", limit }))).toHaveLength(kept.length)
        }
        const rust = kept.filter((l) => l.language === "Rust")
        expect(yield* allPages(query({ topic, text: `-${banned}`, language: "rust", sort: "relevance", limit: 1 }))).toStrictEqual(byIdDesc(rust))
        expect(yield* allPages(query({ topic, text: `-${banned}`, language: "cobol", sort: "stars", limit: 1 }))).toStrictEqual([])
        // An alternative of only excluded words matches as much.
        expect(yield* allPages(query({ topic, text: `nothing${banned} or -${banned}`, sort: "price", limit: 2 }))).toHaveLength(kept.length)
      }))

    it.effect("a quoted phrase finds its words in that order only, in every class and order, across pages", () =>
      Effect.gen(function*() {
        const term = word()
        const other = word()
        const owner = () => `o${unique()}`
        const mk = (name: string, description: string, readmeText: string) =>
          list(aListing({ repo: new RepoRef({ owner: owner(), name }), description }), facts({ topics: [term], readmeText }))
        const inReadme = yield* Effect.forEach([1, 2, 3], (i) => mk(`plain-${i}`, "Tools", `Then ${term} ${other} works`))
        const inDescription = yield* mk("described", `The ${term} ${other} kit`, "")
        yield* mk("reversed", "Tools", `Then ${other} ${term} works`)
        yield* mk("apart", `The ${term} and the ${other}`, "")
        const catalog = yield* ListingCatalog
        const phrase = `"${term} ${other}"`
        const expected = [inDescription.id, ...inReadme.map((l) => l.id).sort().reverse()]
        for (const limit of [1, 2, 10]) {
          expect(yield* allPages(query({ text: phrase, sort: "relevance", limit }))).toStrictEqual(expected)
          expect([...(yield* allPages(query({ text: phrase, sort: "stars", limit })))].sort()).toStrictEqual([...expected].sort())
        }
        // Its words alone, in any order, find all of them.
        expect(yield* allPages(query({ text: `${term} ${other}`, sort: "newest" }))).toHaveLength(6)
      }))

    for (const sort of ["newest", "price", "stars", "relevance"] as const) {
      it.effect(`pages through "${sort}" without duplicates or gaps while listings are added`, () =>
        Effect.gen(function*() {
          const term = word()
          const mk = (i: number, minute: number) =>
            list(
              aListing({
                repo: new RepoRef({ owner: `o${unique()}`, name: `${term}-${i}` }),
                // Ties on purpose: every key is shared by three listings, so the id decides among them.
                price: usd(5 + (i % 4)),
                createdAt: new Date(Date.UTC(2024, 0, 1, 0, minute % 9)),
                updatedAt: new Date(Date.UTC(2024, 0, 1, 0, minute % 9))
              }),
              facts({ topics: [term], stars: i % 5 })
            )
          const original = yield* Effect.forEach(Array.from({ length: 23 }, (_, i) => i), (i) => mk(i, i))
          let extra = 100
          // After every page, three more listings land: before, among and after the pages still to come.
          const seen = yield* allPages(query({ topic: term, text: sort === "relevance" ? term : null, sort, limit: 5 }), () =>
            Effect.asVoid(Effect.forEach([0, 4, 8], (m) => mk(extra++, m))))
          expect(new Set(seen).size).toBe(seen.length)
          for (const l of original) expect(seen).toContain(l.id)
        }))
    }

    it.effect("reflects a takedown and a reprice at once", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const catalog = yield* ListingCatalog
        const topic = word()
        const a = yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "a" }), price: usd(10) }), facts({ topics: [topic] }))
        const b = yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "b" }), price: usd(20) }), facts({ topics: [topic] }))
        const names = (q: Partial<CatalogQuery>) => Effect.map(catalog.search(query({ topic, sort: "price", ...q })), repos)
        expect(yield* names({})).toStrictEqual(["a", "b"])
        yield* store.update(new Listing({ ...a, price: usd(30) }))
        expect(yield* names({})).toStrictEqual(["b", "a"])
        expect(yield* names({ maxPrice: usd(25) })).toStrictEqual(["b"])
        expect((yield* catalog.search(query({ topic, sort: "price" }))).entries[1]!.listing.price).toBe(usd(30))
        yield* store.update(new Listing({ ...b, status: "taken_down", takenDownAt: new Date(), hostPat: null }))
        expect(yield* names({})).toStrictEqual(["a"])
        yield* store.update(new Listing({ ...a, price: null }))
        expect(yield* names({})).toStrictEqual([])
      }))

    it.effect("counts selling listings per category; recording facts again replaces them", () =>
      Effect.gen(function*() {
        const catalog = yield* ListingCatalog
        const count = (category: Category) => Effect.map(catalog.categoryCounts, (cs) => cs.find((c) => c.category === category)?.count ?? 0)
        const before = { games: yield* count("games"), docs: yield* count("docs") }
        const topic = word()
        const one = yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "g1" }) }), facts({ category: "games", topics: [topic] }))
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "g2" }) }), facts({ category: "games" }))
        yield* list(aListing({ repo: new RepoRef({ owner: `o${unique()}`, name: "g3" }), price: null }), facts({ category: "games" }))
        expect(yield* count("games")).toBe(before.games + 2)
        yield* catalog.describe(one, facts({ category: "docs", topics: [`${topic}-new`], stars: 7 }))
        expect(yield* count("games")).toBe(before.games + 1)
        expect(yield* count("docs")).toBe(before.docs + 1)
        expect((yield* catalog.search(query({ topic }))).entries).toHaveLength(0)
        const moved = yield* catalog.search(query({ topic: `${topic}-new` }))
        expect(moved.entries.map((e) => e.facts)).toStrictEqual([{ topics: [`${topic}-new`], stars: 7, category: "docs" }])
      }))
  })

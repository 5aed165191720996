import { Effect, Layer } from "effect"
import { type CatalogEntry, type CatalogFacts, type CatalogPosition, type CatalogQuery, noFacts, positionOf } from "../../domain/Catalog.js"
import type { ListingId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import type { Category } from "../../domain/rules/Category.js"
import { nameSearchText, topicsSearchText } from "../../domain/rules/SearchText.js"
import { isSelling } from "../../domain/rules/Selling.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingsMemory } from "./ListingStoreMemory.js"

/*
 * The catalog in memory, for tests and embedding. Text matching is a plain tokenizer: lowercase words of
 * letters and digits, common English words dropped, no stemming (PostgreSQL stems: "parsers" finds "parser"
 * there, not here). Relevance comes in the SQL adapter's classes (name, then name with description and
 * topics, then README; by id within a class). The contract suite checks the two agree.
 */

const STOP_WORDS = new Set(("a an and are as at be but by for from has have he her his i if in into is it its " +
  "me my no not of on or our she so than that the their them then there these they this those to too us was we " +
  "were what when where which who why will with you your").split(" "))

const tokens = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== "" && !STOP_WORDS.has(t))

interface Document {
  readonly weights: ReadonlyMap<string, number>
}

const WEIGHT = { name: 1, description: 0.4, readme: 0 } as const

const documentOf = (listing: Listing, facts: CatalogFacts): Document => {
  const weights = new Map<string, number>()
  const add = (text: string, weight: number) => {
    for (const t of tokens(text)) weights.set(t, Math.max(weights.get(t) ?? weight, weight))
  }
  add(nameSearchText(listing.repo.name), WEIGHT.name)
  add(`${listing.description ?? ""} ${topicsSearchText(facts.topics)}`, WEIGHT.description)
  add(facts.readmeText, WEIGHT.readme)
  return { weights }
}

/** Web-search syntax as PostgreSQL's websearch_to_tsquery reads it: words ANDed, `or`, `-word`, quotes. */
interface Alternative {
  readonly must: ReadonlyArray<string>
  readonly not: ReadonlyArray<string>
}

const parseQuery = (text: string): ReadonlyArray<Alternative> =>
  text.split(/\s+or\s+/i).map((part) => {
    const must: Array<string> = []
    const not: Array<string> = []
    for (const raw of part.replace(/"/g, " ").split(/\s+/)) {
      if (raw.startsWith("-") && raw.length > 1) not.push(...tokens(raw.slice(1)))
      else must.push(...tokens(raw))
    }
    return { must, not }
  }).filter((a) => a.must.length > 0 || a.not.length > 0)

/** The words of a document at or above a weight: the name (1), the name, description and topics (0.4), all (0). */
const wordsFrom = (doc: Document, weight: number) => (t: string) => (doc.weights.get(t) ?? -1) >= weight

const matchesOn = (has: (t: string) => boolean, query: ReadonlyArray<Alternative>) =>
  query.some((alt) => alt.must.every(has) && !alt.not.some(has))

/**
 * The relevance class of a document for a query, or null when it does not match: 2 when the name alone
 * matches the whole query, 1 when the name, description and topics do, 0 when only the README makes it
 * match (as in the SQL adapter, see migration 0007).
 */
const rankOf = (doc: Document, query: ReadonlyArray<Alternative>): number | null => {
  if (!matchesOn(wordsFrom(doc, WEIGHT.readme), query)) return null
  if (matchesOn(wordsFrom(doc, WEIGHT.name), query)) return 2
  return matchesOn(wordsFrom(doc, WEIGHT.description), query) ? 1 : 0
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Negative when `a` comes first in the sort's order. */
const compare = (a: CatalogPosition, b: CatalogPosition): number => {
  switch (a.sort) {
    case "relevance":
      return (b as typeof a).rank - a.rank || compareIds(b.id, a.id)
    case "newest":
      return (b as typeof a).createdAt.getTime() - a.createdAt.getTime() || compareIds(b.id, a.id)
    case "price": {
      const other = (b as typeof a).price
      return a.price < other ? -1 : a.price > other ? 1 : compareIds(a.id, b.id)
    }
    case "stars":
      return (b as typeof a).stars - a.stars || compareIds(b.id, a.id)
  }
}

/**
 * The ListingCatalog in memory: searches the listings of ListingStoreMemory (through ListingsMemory) at query time.
 */
export const ListingCatalogMemory = Layer.effect(
  ListingCatalog,
  Effect.map(ListingsMemory, (listings) => {
    const facts = new Map<ListingId, { readonly facts: CatalogFacts; readonly doc: Document }>()
    const factsOf = (listing: Listing) => {
      const known = facts.get(listing.id)
      if (known !== undefined) return known
      const none = noFacts(listing)
      return { facts: none, doc: documentOf(listing, none) }
    }
    const selling = () => [...listings.values()].filter(isSelling)

    return {
      search: (query: CatalogQuery) =>
        Effect.sync(() => {
          const text = query.text === null ? null : parseQuery(query.text)
          const matches: Array<CatalogEntry> = []
          for (const listing of selling()) {
            const known = factsOf(listing)
            const f = known.facts
            if (query.language !== null && listing.language?.toLowerCase() !== query.language.toLowerCase()) continue
            if (query.category !== null && f.category !== query.category) continue
            if (query.topic !== null && !f.topics.includes(query.topic)) continue
            if (query.chain !== null && listing.payTo[query.chain] === null) continue
            if (query.maxPrice !== null && listing.price! > query.maxPrice) continue
            const rank = text === null ? null : rankOf(known.doc, text)
            if (text !== null && rank === null) continue
            matches.push({ listing, facts: { topics: f.topics, stars: f.stars, category: f.category }, rank })
          }
          const ordered = matches
            .map((entry) => ({ entry, at: positionOf(entry, query.sort) }))
            .filter(({ at }) => query.after === null || compare(at, query.after) > 0)
            .sort((a, b) => compare(a.at, b.at))
          const page = ordered.slice(0, query.limit).map(({ entry }) => entry)
          const last = page[page.length - 1]
          return { entries: page, next: ordered.length > query.limit && last !== undefined ? positionOf(last, query.sort) : null }
        }),
      categoryCounts: Effect.sync(() => {
        const counts = new Map<Category, number>()
        for (const listing of selling()) {
          const category = factsOf(listing).facts.category
          counts.set(category, (counts.get(category) ?? 0) + 1)
        }
        return [...counts].map(([category, count]) => ({ category, count }))
      }),
      describe: (listing, recorded) => Effect.sync(() => void facts.set(listing.id, { facts: recorded, doc: documentOf(listing, recorded) }))
    }
  })
)

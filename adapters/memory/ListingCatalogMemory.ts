import { Effect, Layer } from "effect"
import { type CatalogEntry, type CatalogFacts, type CatalogPosition, type CatalogQuery, positionOf } from "../../domain/Catalog.js"
import type { ListingId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { noFacts } from "../../domain/rules/CatalogFacts.js"
import type { Category } from "../../domain/rules/Category.js"
import { nameSearchText, topicsSearchText } from "../../domain/rules/SearchText.js"
import { isSelling } from "../../domain/rules/Selling.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingsMemory } from "./ListingStoreMemory.js"

/*
 * The catalog in memory, for tests and embedding. Text matching is a plain tokenizer: lowercase words of
 * letters and digits, common English words dropped (they only hold a place in a phrase), no stemming
 * (PostgreSQL stems: "parsers" finds "parser" there, not here). Relevance comes in the SQL adapter's classes (name, then name with description and
 * topics, then README; by id within a class). The contract suite checks the two agree.
 */

const STOP_WORDS = new Set(("a an and are as at be but by for from has have he her his i if in into is it its " +
  "me my no not of on or our she so than that the their them then there these they this those to too us was we " +
  "were what when where which who why will with you your").split(" "))

/** Lowercase words of letters and digits, stop words kept (they hold a place in a phrase). */
const words = (text: string): ReadonlyArray<string> => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== "")

/** One field of a document: its words in order, and its weight. */
interface Field {
  readonly words: ReadonlyArray<string>
  readonly weight: number
}

interface Document {
  readonly fields: ReadonlyArray<Field>
}

const WEIGHT = { name: 1, description: 0.4, readme: 0 } as const

const documentOf = (listing: Listing, facts: CatalogFacts): Document => ({
  fields: [
    { words: words(nameSearchText(listing.repo.name)), weight: WEIGHT.name },
    { words: words(`${listing.description ?? ""} ${topicsSearchText(facts.topics)}`), weight: WEIGHT.description },
    { words: words(facts.readmeText), weight: WEIGHT.readme }
  ]
})

/**
 * A word, or a phrase: words in this order, one after the other (`null` stands for a stop word, which holds
 * its place but matches any word), as a quoted phrase or a word with inner punctuation (`fast-json`) is in
 * PostgreSQL.
 */
type Term = ReadonlyArray<string | null>

/** Web-search syntax as PostgreSQL's websearch_to_tsquery reads it: words ANDed, `or`, `-word`, `"a phrase"`. */
interface Alternative {
  readonly must: ReadonlyArray<Term>
  readonly not: ReadonlyArray<Term>
}

/** The term of a word or phrase, stop words at its ends dropped; null when nothing is left. */
const termOf = (text: string): Term | null => {
  const all = words(text).map((w) => (STOP_WORDS.has(w) ? null : w))
  const first = all.findIndex((w) => w !== null)
  if (first < 0) return null
  const last = all.length - 1 - [...all].reverse().findIndex((w) => w !== null)
  return all.slice(first, last + 1)
}

const parseQuery = (text: string): ReadonlyArray<Alternative> => {
  const alternatives: Array<{ must: Array<Term>; not: Array<Term> }> = [{ must: [], not: [] }]
  // A quoted phrase (to the next quote, or the end), or a run of other characters; `-` before either excludes it.
  for (const [, minus, quoted, plain] of text.matchAll(/(-?)(?:"([^"]*)"?|([^\s"]+))/g)) {
    if (quoted === undefined && minus === "" && plain!.toLowerCase() === "or") {
      alternatives.push({ must: [], not: [] })
      continue
    }
    const term = termOf(quoted ?? plain ?? "")
    if (term === null) continue
    const current = alternatives[alternatives.length - 1]!
    if (minus === "-") current.not.push(term)
    else current.must.push(term)
  }
  return alternatives.filter((a) => a.must.length > 0 || a.not.length > 0)
}

/** Whether the term is in the field: its words at consecutive places. */
const inField = (term: Term, field: Field) => {
  for (let at = 0; at + term.length <= field.words.length; at++) {
    if (term.every((w, k) => w === null || field.words[at + k] === w)) return true
  }
  return false
}

/** The terms of a document at or above a weight: the name (1), the name, description and topics (0.4), all (0). */
const wordsFrom = (doc: Document, weight: number) => (term: Term) => doc.fields.some((f) => f.weight >= weight && inField(term, f))

const matchesOn = (has: (t: Term) => boolean, query: ReadonlyArray<Alternative>) =>
  query.some((alt) => alt.must.every(has) && !alt.not.some(has))

/**
 * A query with an alternative of only excluded words matches nearly every listing, and no index narrows it
 * (PostgreSQL's `querytree` is `T`): as in the SQL adapter, it tells no relevance (rank null, by id) and each
 * page checks at most `CAPPED` candidates, ending early with a cursor past them.
 */
const unindexed = (query: ReadonlyArray<Alternative>) => query.some((alt) => alt.must.length === 0)

/** Candidates a page of an unindexed query checks: the SQL adapter's default (`DEFAULT_RELEVANCE_WINDOWS.capped`). */
const CAPPED = 300

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
          const capped = text !== null && unindexed(text)
          const candidates: Array<CatalogEntry & { readonly doc: Document }> = []
          for (const listing of selling()) {
            const known = factsOf(listing)
            const f = known.facts
            if (query.language !== null && listing.language?.toLowerCase() !== query.language.toLowerCase()) continue
            if (query.category !== null && f.category !== query.category) continue
            if (query.topic !== null && !f.topics.includes(query.topic)) continue
            if (query.chain !== null && listing.payTo[query.chain] === null) continue
            if (query.maxPrice !== null && listing.price! > query.maxPrice) continue
            const rank = text === null || capped ? null : rankOf(known.doc, text)
            if (text !== null && !capped && rank === null) continue
            candidates.push({ listing, facts: { topics: f.topics, stars: f.stars, category: f.category }, rank, doc: known.doc })
          }
          const ordered = candidates
            .map((entry) => ({ entry, at: positionOf(entry, query.sort) }))
            .filter(({ at }) => query.after === null || compare(at, query.after) > 0)
            .sort((a, b) => compare(a.at, b.at))
          const strip = ({ doc: _doc, ...entry }: CatalogEntry & { readonly doc: Document }): CatalogEntry => entry
          if (text !== null && capped) {
            // Candidates in order, CAPPED at most; the page ends at the CAPPED-th when it did not fill first.
            const checked = ordered.slice(0, CAPPED)
            const hits = checked.filter(({ entry }) => rankOf(entry.doc, text) !== null).map(({ entry }) => strip(entry))
            const page = hits.slice(0, query.limit)
            if (hits.length > query.limit) return { entries: page, next: positionOf(page[page.length - 1]!, query.sort) }
            const cut = checked[checked.length - 1]
            return { entries: page, next: ordered.length > CAPPED && cut !== undefined ? positionOf(cut.entry, query.sort) : null }
          }
          const page = ordered.slice(0, query.limit).map(({ entry }) => strip(entry))
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

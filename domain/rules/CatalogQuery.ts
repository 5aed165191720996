import { Either, Encoding, Option } from "effect"
import { CATALOG_SORTS, type CatalogPosition, type CatalogQuery, type CatalogSort } from "../Catalog.js"
import { FieldProblem, InvalidInput } from "../Errors.js"
import type { ListingId } from "../Ids.js"
import { AtomicAmount, MAX_PRICE, MIN_PRICE } from "../Money.js"
import { CATEGORIES, type Category } from "./Category.js"

/** The parameters of `GET /listings` as they arrive: strings, each possibly absent. */
export interface CatalogParams {
  /** Free-text search. */
  readonly q?: string | undefined
  /** A language name, e.g. TypeScript. */
  readonly language?: string | undefined
  /** One of `CATEGORIES`. */
  readonly category?: string | undefined
  /** A code-host topic. */
  readonly topic?: string | undefined
  /** `base` or `solana`. */
  readonly chain?: string | undefined
  /** The highest price in US dollars, up to two places (`20`, `19.99`). */
  readonly max_price_usd?: string | undefined
  /** One of `CATALOG_SORTS`. */
  readonly sort?: string | undefined
  /** The `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
  /** Entries per page, 1 to `MAX_LIMIT`. */
  readonly limit?: string | undefined
}

/** The names of every `GET /listings` parameter. */
export const CATALOG_PARAMS = ["q", "language", "category", "topic", "chain", "max_price_usd", "sort", "cursor", "limit"] as const
/** Entries per catalog page when `limit` is absent. */
export const DEFAULT_LIMIT = 20
/** The most entries a catalog page can hold. */
export const MAX_LIMIT = 100
const MAX_QUERY_LENGTH = 200
/** The most alternatives `q` may join with `or`: each is one more lookup in the text index over every listing. */
const MAX_QUERY_ALTERNATIVES = 8
/** The most words a quoted phrase in `q` may hold: a phrase is checked against each candidate's whole text. */
const MAX_PHRASE_WORDS = 8
const WORD = /[\p{L}\p{N}]+/gu
// C0 and C1 controls (NUL above all: PostgreSQL refuses it in text) and lone surrogates never belong in a search.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const TOPIC = /^[a-z0-9][a-z0-9-]{0,49}$/
const LANGUAGE = /^[\p{L}\p{N}][\p{L}\p{N} +#.'*-]{0,49}$/u
const MAX_PRICE_PATTERN = /^[0-9]{1,6}(\.[0-9]{1,2})?$/
const ID = /^lst_[A-Za-z0-9_-]{1,64}$/

const isCategory = (s: string): s is Category => (CATEGORIES as ReadonlyArray<string>).includes(s)
const isSort = (s: string): s is CatalogSort => (CATALOG_SORTS as ReadonlyArray<string>).includes(s)

/** A given value that does not fit its pattern (an absent one is never refused). */
const refuses = (value: string | null, pattern: RegExp): boolean => Option.exists(Option.fromNullable(value), (v) => !pattern.test(v))

/** Dollars with up to two places (`20`, `19.5`, `19.99`) as atomic units. */
const parseMaxPrice = (input: string): AtomicAmount | null => {
  if (!MAX_PRICE_PATTERN.test(input)) return null
  const [whole, frac = ""] = input.split(".") as [string, string?]
  const atomic = (BigInt(whole) * 100n + BigInt(frac.padEnd(2, "0"))) * 10_000n
  return atomic < MIN_PRICE || atomic > MAX_PRICE ? null : AtomicAmount.make(atomic)
}

/**
 * How `q` reads as web-search syntax (as PostgreSQL's `websearch_to_tsquery` reads it): how many alternatives
 * it joins with `or` (outside quotes, in any case), and how many words its longest quoted phrase holds (a quote
 * left open runs to the end).
 */
const queryShape = (q: string) => {
  let alternatives = 1
  let longestPhrase = 0
  q.split("\"").forEach((part, i) => {
    if (i % 2 === 1) longestPhrase = Math.max(longestPhrase, part.match(WORD)?.length ?? 0)
    else alternatives += part.split(/\s/).filter((w) => w.toLowerCase() === "or").length
  })
  return { alternatives, longestPhrase }
}

/** The opaque cursor of a position: versioned, base64url JSON. It names its sort so it cannot be misread. */
export const encodeCursor = (p: CatalogPosition): string => {
  const key = p.sort === "relevance" ? p.rank : p.sort === "newest" ? p.createdAt.getTime() : p.sort === "price" ? p.price.toString() : p.stars
  return Encoding.encodeBase64Url(JSON.stringify([1, p.sort, key, p.id]))
}

/** The position a cursor names, or null when it is not one this service made for this sort. */
export const decodeCursor = (cursor: string, sort: CatalogSort): CatalogPosition | null => {
  if (cursor.length > 300 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null
  // Not base64url, or not JSON: undefined, which the shape check below refuses.
  const value: unknown = Either.getOrUndefined(
    Either.flatMap(Encoding.decodeBase64UrlString(cursor), (text) => Either.try((): unknown => JSON.parse(text)))
  )
  if (!Array.isArray(value) || value.length !== 4 || value[0] !== 1 || value[1] !== sort) return null
  const [, , key, rawId] = value as [number, string, unknown, unknown]
  if (typeof rawId !== "string" || !ID.test(rawId)) return null
  const id = rawId as ListingId
  switch (sort) {
    case "relevance":
      return Number.isFinite(key) && (key as number) >= 0 ? { sort, rank: key as number, id } : null
    case "newest":
      return Number.isSafeInteger(key) && (key as number) >= 0 && (key as number) <= 8.64e15 ? { sort, createdAt: new Date(key as number), id } : null
    case "price":
      return typeof key === "string" && /^[0-9]{1,15}$/.test(key) ? { sort, price: AtomicAmount.make(BigInt(key)), id } : null
    case "stars":
      return Number.isSafeInteger(key) && (key as number) >= 0 && (key as number) <= 2_147_483_647 ? { sort, stars: key as number, id } : null
  }
}

/**
 * Validates every parameter, collecting each problem so one 400 names all bad ones. Empty values count as
 * absent (a browser's search form sends every field). Without text, `relevance` orders newest first.
 */
export const parseCatalogQuery = (params: CatalogParams): Either.Either<CatalogQuery, InvalidInput> => {
  const problems: Array<FieldProblem> = []
  const bad = (field: string, message: string) => void problems.push(new FieldProblem({ field, message }))
  const given = (v: string | undefined) => (v === undefined || v.trim() === "" ? null : v.trim())

  const q = given(params.q)
  if (q !== null && (q.length > MAX_QUERY_LENGTH || CONTROL.test(q))) {
    bad("q", `must be at most ${MAX_QUERY_LENGTH} characters of text without control characters`)
  }
  if (q !== null) {
    const shape = queryShape(q)
    if (shape.alternatives > MAX_QUERY_ALTERNATIVES) bad("q", `may join at most ${MAX_QUERY_ALTERNATIVES} alternatives with or`)
    if (shape.longestPhrase > MAX_PHRASE_WORDS) bad("q", `may hold at most ${MAX_PHRASE_WORDS} words in a quoted phrase`)
  }
  const language = given(params.language)
  if (refuses(language, LANGUAGE)) bad("language", "must be a language name such as TypeScript or C++ (at most 50 characters)")
  const category = given(params.category)?.toLowerCase() ?? null
  if (category !== null && !isCategory(category)) bad("category", `must be one of ${CATEGORIES.join(", ")}`)
  const topic = given(params.topic)?.toLowerCase() ?? null
  if (refuses(topic, TOPIC)) bad("topic", "must be a code-host topic: lowercase letters, digits and hyphens, at most 50")
  const chain = given(params.chain)?.toLowerCase() ?? null
  if (chain !== null && chain !== "base" && chain !== "solana") bad("chain", "must be base or solana")
  const rawMax = given(params.max_price_usd)
  const maxPrice = Option.getOrNull(Option.flatMapNullable(Option.fromNullable(rawMax), parseMaxPrice))
  if (rawMax !== null && maxPrice === null) bad("max_price_usd", "must be US dollars from 0.01 to 100000.00, like 20 or 19.99")
  const rawSort = given(params.sort)?.toLowerCase() ?? null
  if (rawSort !== null && !isSort(rawSort)) bad("sort", `must be one of ${CATALOG_SORTS.join(", ")}`)
  const rawLimit = given(params.limit)
  const limit = rawLimit === null ? DEFAULT_LIMIT : /^[0-9]{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN
  if (!(limit >= 1 && limit <= MAX_LIMIT)) bad("limit", `must be a whole number from 1 to ${MAX_LIMIT}`)

  // Relevance by default; without text there is nothing to be relevant to, so newest.
  const requested: CatalogSort = Option.getOrElse(Option.filter(Option.fromNullable(rawSort), isSort), (): CatalogSort => "relevance")
  const sort: CatalogSort = requested === "relevance" && q === null ? "newest" : requested
  const rawCursor = given(params.cursor)
  const after = rawCursor === null ? null : decodeCursor(rawCursor, sort)
  if (rawCursor !== null && after === null) bad("cursor", "must be the next_cursor of a previous page with the same sort")

  if (problems.length > 0) return Either.left(InvalidInput.forFields(problems))
  return Either.right({
    text: q,
    language,
    category: category as Category | null,
    topic,
    chain: chain as "base" | "solana" | null,
    maxPrice,
    sort,
    after,
    limit
  })
}

import { describe, expect, it } from "@effect/vitest"
import { Either, Encoding } from "effect"
import fc from "fast-check"
import { CATALOG_SORTS, type CatalogPosition, type CatalogQuery } from "../../domain/Catalog.js"
import type { FieldProblem } from "../../domain/Errors.js"
import { ListingId } from "../../domain/Ids.js"
import { AtomicAmount } from "../../domain/Money.js"
import { CATEGORIES } from "../../domain/rules/Category.js"
import {
  CATALOG_PARAMS,
  type CatalogParams,
  decodeCursor,
  DEFAULT_LIMIT,
  encodeCursor,
  MAX_LIMIT,
  parseCatalogQuery
} from "../../domain/rules/CatalogQuery.js"

/*
 * The parameters of GET /listings, as a buyer's search form or an agent sends them: what each one accepts, how
 * it is normalised, why a bad value is refused (the 400 names the parameter and says what it must be), the
 * defaults of an empty query, and the opaque cursor that carries a page's end to the next request.
 */

/** The validated query; fails the test with the refusal when the parameters were refused. */
const accepted = (params: CatalogParams): CatalogQuery =>
  Either.getOrThrowWith(parseCatalogQuery(params), (e) => new Error(`refused: ${e.detail}`))
/** The problems of a refused query, in the order the rule lists them; fails the test when it was accepted. */
const problems = (params: CatalogParams): ReadonlyArray<{ field: string; message: string }> =>
  Either.match(parseCatalogQuery(params), {
    onLeft: (e) => e.errors.map((p: FieldProblem) => ({ field: p.field, message: p.message })),
    onRight: (q) => {
      throw new Error(`accepted: ${JSON.stringify(q, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`)
    }
  })
/** The one problem of a query refused for a single parameter. */
const refusal = (params: CatalogParams) => {
  const all = problems(params)
  expect(all).toHaveLength(1)
  return all[0]!
}

const Q_MESSAGE = "must be at most 200 characters of text without control characters"
const OR_MESSAGE = "may join at most 8 alternatives with or"
const PHRASE_MESSAGE = "may hold at most 8 words in a quoted phrase"
const LANGUAGE_MESSAGE = "must be a language name such as TypeScript or C++ (at most 50 characters)"
const CATEGORY_MESSAGE = "must be one of ai-ml, blockchain, security, devops, data, web, mobile, games, cli, library, docs, other"
const TOPIC_MESSAGE = "must be a code-host topic: lowercase letters, digits and hyphens, at most 50"
const CHAIN_MESSAGE = "must be base or solana"
const PRICE_MESSAGE = "must be US dollars from 0.01 to 100000.00, like 20 or 19.99"
const SORT_MESSAGE = "must be one of relevance, newest, price, stars"
const LIMIT_MESSAGE = "must be a whole number from 1 to 100"
const CURSOR_MESSAGE = "must be the next_cursor of a previous page with the same sort"

const id = (s: string) => ListingId.make(s)
const usd = (atomic: bigint) => AtomicAmount.make(atomic)
/** A cursor made by hand from its JSON text (whitespace and numbers exactly as written). */
const rawCursor = (json: string) => Encoding.encodeBase64Url(json)
/** A cursor made by hand from a value. */
const cursorOf = (value: unknown) => rawCursor(JSON.stringify(value))

const EMPTY_QUERY: CatalogQuery = {
  text: null,
  language: null,
  category: null,
  topic: null,
  chain: null,
  maxPrice: null,
  sort: "newest",
  after: null,
  limit: 20
}

describe("catalog query: defaults", () => {
  it("the catalog's parameters are the nine documented ones, 20 entries a page by default and at most 100", () => {
    expect(CATALOG_PARAMS).toStrictEqual(["q", "language", "category", "topic", "chain", "max_price_usd", "sort", "cursor", "limit"])
    expect(DEFAULT_LIMIT).toBe(20)
    expect(MAX_LIMIT).toBe(100)
  })

  it("no parameters: the whole catalog, newest first, 20 a page, from the start", () => {
    expect(parseCatalogQuery({})).toStrictEqual(Either.right(EMPTY_QUERY))
  })

  it("empty and blank values count as absent (a browser's search form sends every field)", () => {
    const blank = Object.fromEntries(CATALOG_PARAMS.map((name) => [name, ""])) as CatalogParams
    expect(accepted(blank)).toStrictEqual(EMPTY_QUERY)
    const spaces = Object.fromEntries(CATALOG_PARAMS.map((name) => [name, "  \t "])) as CatalogParams
    expect(accepted(spaces)).toStrictEqual(EMPTY_QUERY)
  })

  it("every accepted value is trimmed of surrounding whitespace", () => {
    expect(accepted({
      q: "  json parser ",
      language: " Rust ",
      category: " cli ",
      topic: " parser ",
      chain: " base ",
      max_price_usd: " 20 ",
      sort: " price ",
      limit: " 5 "
    })).toStrictEqual({
      text: "json parser",
      language: "Rust",
      category: "cli",
      topic: "parser",
      chain: "base",
      maxPrice: usd(20_000_000n),
      sort: "price",
      after: null,
      limit: 5
    })
  })
})

describe("catalog query: q (free text)", () => {
  it("text is searched as given, and orders the catalog by relevance unless another sort is asked for", () => {
    expect(accepted({ q: "json parser" })).toStrictEqual({ ...EMPTY_QUERY, text: "json parser", sort: "relevance" })
    expect(accepted({ q: "json", sort: "stars" })).toMatchObject({ text: "json", sort: "stars" })
    expect(accepted({ q: "日本語 🙂 \"exact phrase\" -not or" }).text).toBe("日本語 🙂 \"exact phrase\" -not or")
  })

  it("text of at most 200 characters is accepted; 201 are refused for their length", () => {
    expect(accepted({ q: "x".repeat(200) }).text).toBe("x".repeat(200))
    // The length is counted after trimming.
    expect(accepted({ q: `   ${"x".repeat(200)}   ` }).text).toBe("x".repeat(200))
    expect(refusal({ q: "x".repeat(201) })).toStrictEqual({ field: "q", message: Q_MESSAGE })
  })

  it("text holding a control character is refused (NUL above all: PostgreSQL refuses it in text)", () => {
    for (const q of ["a\u0000b", "line\nbreak", "tab\there", "a\u001fb", "a\u007fb", "a\u0080b", "a\u009fb", "\u0007"]) {
      expect(refusal({ q }), JSON.stringify(q)).toStrictEqual({ field: "q", message: Q_MESSAGE })
    }
    // Just past the C1 controls: an ordinary (no-break) space and letters.
    expect(accepted({ q: "a\u00a0b\u00a1" }).text).toBe("a\u00a0b\u00a1")
  })

  it("text may join at most 8 alternatives with or (7 times or, in any case); 9 are refused, naming the limit", () => {
    const chain = (n: number, or = "or") => Array.from({ length: n }, (_, i) => `w${i}`).join(` ${or} `)
    expect(accepted({ q: chain(8) }).text).toBe(chain(8))
    expect(accepted({ q: chain(8, "OR") }).text).toBe(chain(8, "OR"))
    expect(refusal({ q: chain(9) })).toStrictEqual({ field: "q", message: OR_MESSAGE })
    expect(refusal({ q: chain(9, "Or") })).toStrictEqual({ field: "q", message: OR_MESSAGE })
    // Any whitespace separates the word or, and every or counts, even first or last or repeated.
    expect(refusal({ q: `or${"\u00a0or".repeat(8)}` })).toStrictEqual({ field: "q", message: OR_MESSAGE })
    expect(accepted({ q: `or ${"or ".repeat(6)}` }).text).toBe(`or ${"or ".repeat(5)}or`)
    // Only the word or alone: not inside other words, not excluded, not quoted.
    expect(accepted({ q: Array.from({ length: 9 }, () => "for order -or orca").join(" ") }).text).toContain("order")
    expect(accepted({ q: `${chain(8)} "${"or ".repeat(5)}" "or"` }).text).toContain("\"or\"")
    // Quotes end a phrase: an or after a closed phrase counts again.
    expect(refusal({ q: `"a b" ${chain(9)}` })).toStrictEqual({ field: "q", message: OR_MESSAGE })
  })

  it("a quoted phrase may hold at most 8 words (runs of letters or digits); 9 are refused, naming the limit", () => {
    const phrase = (n: number, sep = " ") => `"${Array.from({ length: n }, (_, i) => `word${i}`).join(sep)}"`
    expect(accepted({ q: phrase(8) }).text).toBe(phrase(8))
    expect(refusal({ q: phrase(9) })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    // Punctuation separates words as spaces do; letters of any script and digits make words, each run one word.
    expect(refusal({ q: phrase(9, "-") })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    expect(refusal({ q: `"${"12 ".repeat(9)}"` })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    expect(refusal({ q: `"${"日本 ".repeat(9)}"` })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    expect(accepted({ q: `"${"longword, ".repeat(8)}!!! ???"` }).text).toContain("longword")
    // A quote left open runs to the end; words outside quotes are no phrase.
    expect(refusal({ q: `a ${phrase(9).slice(0, -1)}` })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    expect(accepted({ q: Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ") }).text).toContain("w19")
    // Every phrase is judged, the longest decides, wherever it stands; an empty phrase is no word.
    expect(accepted({ q: `${phrase(8)} x ${phrase(2)} "" ${phrase(8)}` }).text).toContain("word7")
    expect(refusal({ q: `${phrase(2)} "" x ${phrase(9)}` })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
    expect(refusal({ q: `"" ${phrase(9)} ${phrase(3)}` })).toStrictEqual({ field: "q", message: PHRASE_MESSAGE })
  })

  it("both limits, and the length, are named at once when all are passed", () => {
    const q = `${Array.from({ length: 9 }, () => "x").join(" or ")} "${"a ".repeat(9)}" ${"y".repeat(200)}`
    expect(problems({ q })).toStrictEqual([
      { field: "q", message: Q_MESSAGE },
      { field: "q", message: OR_MESSAGE },
      { field: "q", message: PHRASE_MESSAGE }
    ])
  })

  it("text holding a lone surrogate is refused; a well-formed pair (an emoji) is text", () => {
    for (const q of ["a\ud83db", "a\ude42b", "end\ud83d", "\ude42start", "\ude42\ud83d"]) {
      expect(refusal({ q }), JSON.stringify(q)).toStrictEqual({ field: "q", message: Q_MESSAGE })
    }
    expect(accepted({ q: "\ud83d\ude42 smile" }).text).toBe("\ud83d\ude42 smile")
  })
})

describe("catalog query: language", () => {
  it("a language name is accepted as written (matched case-insensitively later, so not folded here)", () => {
    for (const language of ["TypeScript", "C++", "C#", "F*", "Objective-C", "Visual Basic .NET", "Ren'Py", "1C Enterprise", "Émoji", "Go"]) {
      expect(accepted({ language }).language, language).toBe(language)
    }
  })

  it("a name of at most 50 characters is accepted; 51 are refused", () => {
    expect(accepted({ language: "L".repeat(50) }).language).toBe("L".repeat(50))
    expect(refusal({ language: "L".repeat(51) })).toStrictEqual({ field: "language", message: LANGUAGE_MESSAGE })
  })

  it("something that is not a language name is refused, saying what a language name looks like", () => {
    for (const language of ["<script>", "C\u0000", "'; DROP TABLE listings; --", "+C", "-x", "a/b", "a;b", "a\nb"]) {
      expect(refusal({ language }), language).toStrictEqual({ field: "language", message: LANGUAGE_MESSAGE })
    }
  })
})

describe("catalog query: category", () => {
  it("each category of the taxonomy is accepted, in any case", () => {
    for (const category of CATEGORIES) {
      expect(accepted({ category }).category).toBe(category)
      expect(accepted({ category: category.toUpperCase() }).category).toBe(category)
    }
  })

  it("a category outside the taxonomy is refused, listing the categories there are", () => {
    for (const category of ["nope", "web' OR '1'='1", "other)", "ai", "ai-ml,web"]) {
      expect(refusal({ category }), category).toStrictEqual({ field: "category", message: CATEGORY_MESSAGE })
    }
  })
})

describe("catalog query: topic", () => {
  it("a code-host topic is accepted, lower-cased (topics are stored lower-cased)", () => {
    expect(accepted({ topic: "cli" }).topic).toBe("cli")
    expect(accepted({ topic: "Machine-Learning" }).topic).toBe("machine-learning")
    expect(accepted({ topic: "0x" }).topic).toBe("0x")
    expect(accepted({ topic: "z9-" }).topic).toBe("z9-")
  })

  it("a topic of at most 50 characters is accepted; 51 are refused", () => {
    expect(accepted({ topic: "t".repeat(50) }).topic).toBe("t".repeat(50))
    expect(refusal({ topic: "t".repeat(51) })).toStrictEqual({ field: "topic", message: TOPIC_MESSAGE })
  })

  it("a topic with other characters, or not starting with a letter or digit, is refused", () => {
    for (const topic of ["Has Space", "-leading", "a_b", "cli' --", "a.b", "é"]) {
      expect(refusal({ topic }), topic).toStrictEqual({ field: "topic", message: TOPIC_MESSAGE })
    }
  })
})

describe("catalog query: chain", () => {
  it("base and solana are the chains, in any case", () => {
    expect(accepted({ chain: "base" }).chain).toBe("base")
    expect(accepted({ chain: "BASE" }).chain).toBe("base")
    expect(accepted({ chain: "solana" }).chain).toBe("solana")
    expect(accepted({ chain: "Solana" }).chain).toBe("solana")
  })

  it("any other chain is refused, naming the two", () => {
    for (const chain of ["ethereum", "base;", "BASE,solana", "sol"]) {
      expect(refusal({ chain }), chain).toStrictEqual({ field: "chain", message: CHAIN_MESSAGE })
    }
  })
})

describe("catalog query: max_price_usd", () => {
  it("whole dollars and dollars with one or two places are read exactly, in atomic units (6 decimals)", () => {
    expect(accepted({ max_price_usd: "20" }).maxPrice).toBe(usd(20_000_000n))
    expect(accepted({ max_price_usd: "19.99" }).maxPrice).toBe(usd(19_990_000n))
    expect(accepted({ max_price_usd: "19.9" }).maxPrice).toBe(usd(19_900_000n))
    expect(accepted({ max_price_usd: "19.09" }).maxPrice).toBe(usd(19_090_000n))
    expect(accepted({ max_price_usd: "007.50" }).maxPrice).toBe(usd(7_500_000n))
    expect(accepted({ max_price_usd: "98765.43" }).maxPrice).toBe(usd(98_765_430_000n))
  })

  it("0.01 is the lowest maximum accepted; below it is refused", () => {
    expect(accepted({ max_price_usd: "0.01" }).maxPrice).toBe(usd(10_000n))
    for (const max_price_usd of ["0", "0.00", "0.0", "00"]) {
      expect(refusal({ max_price_usd }), max_price_usd).toStrictEqual({ field: "max_price_usd", message: PRICE_MESSAGE })
    }
  })

  it("100000.00 is the highest maximum accepted; a cent more is refused", () => {
    expect(accepted({ max_price_usd: "100000" }).maxPrice).toBe(usd(100_000_000_000n))
    expect(accepted({ max_price_usd: "100000.00" }).maxPrice).toBe(usd(100_000_000_000n))
    for (const max_price_usd of ["100000.01", "100001", "123456", "999999.99"]) {
      expect(refusal({ max_price_usd }), max_price_usd).toStrictEqual({ field: "max_price_usd", message: PRICE_MESSAGE })
    }
  })

  it("anything but plain dollars with at most two places is refused", () => {
    for (const max_price_usd of ["-1", "1e3", "12.345", "abc", "NaN", "Infinity", "$5", "5.", ".5", "1,50", "1234567", "0x10", "+5", "1 0"]) {
      expect(refusal({ max_price_usd }), max_price_usd).toStrictEqual({ field: "max_price_usd", message: PRICE_MESSAGE })
    }
  })

  it("every amount in cents from 0.01 to 100000.00 is read as that many cents", () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10_000_000n }), (cents) => {
      const text = `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`
      expect(accepted({ max_price_usd: text }).maxPrice).toBe(usd(cents * 10_000n))
    }))
  })
})

describe("catalog query: sort", () => {
  it("each sort is accepted, in any case", () => {
    for (const sort of CATALOG_SORTS) {
      expect(accepted({ q: "json", sort }).sort).toBe(sort)
      expect(accepted({ q: "json", sort: sort.toUpperCase() }).sort).toBe(sort)
    }
    expect(accepted({ sort: "price" }).sort).toBe("price")
    expect(accepted({ sort: "stars" }).sort).toBe("stars")
    expect(accepted({ sort: "newest" }).sort).toBe("newest")
  })

  it("without text, relevance has nothing to rank by: the catalog is newest first", () => {
    expect(accepted({ sort: "relevance" }).sort).toBe("newest")
    expect(accepted({ sort: "relevance", q: "   " }).sort).toBe("newest")
    expect(accepted({}).sort).toBe("newest")
  })

  it("with text and no sort, the catalog is ordered by relevance", () => {
    expect(accepted({ q: "json" }).sort).toBe("relevance")
    expect(accepted({ q: "json", sort: "" }).sort).toBe("relevance")
  })

  it("an unknown sort is refused, listing the sorts there are", () => {
    for (const sort of ["popular", "price desc", "1", "-price"]) {
      expect(refusal({ sort }), sort).toStrictEqual({ field: "sort", message: SORT_MESSAGE })
    }
  })
})

describe("catalog query: limit", () => {
  it("a page holds 1 to 100 entries; 0 and 101 are refused", () => {
    expect(accepted({ limit: "1" }).limit).toBe(1)
    expect(accepted({ limit: "100" }).limit).toBe(100)
    expect(accepted({ limit: "10" }).limit).toBe(10)
    expect(accepted({ limit: "99" }).limit).toBe(99)
    expect(refusal({ limit: "0" })).toStrictEqual({ field: "limit", message: LIMIT_MESSAGE })
    expect(refusal({ limit: "101" })).toStrictEqual({ field: "limit", message: LIMIT_MESSAGE })
  })

  it("a limit is at most three plain digits: leading zeros within them are read as decimal", () => {
    expect(accepted({ limit: "007" }).limit).toBe(7)
    expect(accepted({ limit: "050" }).limit).toBe(50)
    for (const limit of ["0100", "0001", "1000"]) {
      expect(refusal({ limit }), limit).toStrictEqual({ field: "limit", message: LIMIT_MESSAGE })
    }
  })

  it("anything but a whole number is refused, even where JavaScript would read a number", () => {
    for (const limit of ["-1", "1.5", "ten", "1e2", "0x10", "+5", "5 5", "x12", "12x", "Infinity", "٣"]) {
      expect(refusal({ limit }), limit).toStrictEqual({ field: "limit", message: LIMIT_MESSAGE })
    }
  })
})

describe("catalog query: every bad parameter is named at once", () => {
  it("one 400 names every bad parameter, each with its reason, in the order of the parameters", () => {
    const refused = parseCatalogQuery({
      q: "a\u0000b",
      language: "<script>",
      category: "nope",
      topic: "Has Space",
      chain: "ethereum",
      max_price_usd: "0",
      sort: "popular",
      limit: "0",
      cursor: "garbage!"
    })
    if (Either.isRight(refused)) throw new Error("accepted")
    const error = refused.left
    expect(error._tag).toBe("InvalidInput")
    expect(error.detail).toBe("Several fields are invalid.")
    expect(error.errors.map((p) => ({ field: p.field, message: p.message }))).toStrictEqual([
      { field: "q", message: Q_MESSAGE },
      { field: "language", message: LANGUAGE_MESSAGE },
      { field: "category", message: CATEGORY_MESSAGE },
      { field: "topic", message: TOPIC_MESSAGE },
      { field: "chain", message: CHAIN_MESSAGE },
      { field: "max_price_usd", message: PRICE_MESSAGE },
      { field: "sort", message: SORT_MESSAGE },
      { field: "limit", message: LIMIT_MESSAGE },
      { field: "cursor", message: CURSOR_MESSAGE }
    ])
  })

  it("a single bad parameter is named in the refusal's detail", () => {
    const refused = parseCatalogQuery({ limit: "101" })
    expect(Either.isLeft(refused) && refused.left.detail).toBe(`limit ${LIMIT_MESSAGE}`)
  })

  it("good parameters beside a bad one do not hide it", () => {
    expect(problems({ q: "json", chain: "base", limit: "500" })).toStrictEqual([{ field: "limit", message: LIMIT_MESSAGE }])
  })

  it("an unknown sort is the only problem of a cursor that fits the default order", () => {
    // The cursor is read with the order the catalog falls back to, so it is not blamed for the bad sort.
    const cursor = encodeCursor({ sort: "newest", createdAt: new Date(1_700_000_000_000), id: id("lst_abc") })
    expect(problems({ sort: "popular", cursor })).toStrictEqual([{ field: "sort", message: SORT_MESSAGE }])
    const ranked = encodeCursor({ sort: "relevance", rank: 0.5, id: id("lst_abc") })
    expect(problems({ q: "json", sort: "popular", cursor: ranked })).toStrictEqual([{ field: "sort", message: SORT_MESSAGE }])
  })
})

const POSITIONS: ReadonlyArray<CatalogPosition> = [
  { sort: "relevance", rank: 0.0759, id: id("lst_Ab3_x-Z9") },
  { sort: "relevance", rank: 0, id: id("lst_a") },
  { sort: "newest", createdAt: new Date("2026-03-01T12:34:56.789Z"), id: id("lst_Q") },
  { sort: "newest", createdAt: new Date(0), id: id(`lst_${"z".repeat(64)}`) },
  { sort: "price", price: usd(19_990_000n), id: id("lst_p") },
  { sort: "price", price: usd(999_999_999_999_999n), id: id("lst_p2") },
  { sort: "stars", stars: 2_147_483_647, id: id("lst_s") },
  { sort: "stars", stars: 0, id: id("lst_0") }
]

describe("catalog cursor", () => {
  it("a page's next_cursor leads back to the position it was made from, for every sort", () => {
    for (const position of POSITIONS) {
      expect(decodeCursor(encodeCursor(position), position.sort)).toStrictEqual(position)
    }
  })

  it("the cursor is versioned base64url JSON naming its sort, its key and the last entry's id", () => {
    const read = (p: CatalogPosition) => JSON.parse(Either.getOrThrow(Encoding.decodeBase64UrlString(encodeCursor(p))))
    expect(read({ sort: "relevance", rank: 0.25, id: id("lst_r") })).toStrictEqual([1, "relevance", 0.25, "lst_r"])
    expect(read({ sort: "newest", createdAt: new Date(1_700_000_000_000), id: id("lst_n") })).toStrictEqual([1, "newest", 1_700_000_000_000, "lst_n"])
    // A price is a decimal string: atomic amounts can exceed a double's exact integers.
    expect(read({ sort: "price", price: usd(19_990_000n), id: id("lst_p") })).toStrictEqual([1, "price", "19990000", "lst_p"])
    expect(read({ sort: "stars", stars: 42, id: id("lst_s") })).toStrictEqual([1, "stars", 42, "lst_s"])
    for (const position of POSITIONS) expect(encodeCursor(position)).toMatch(/^[A-Za-z0-9_-]+$/)
  })

  it("the next page's query carries the position of the cursor, under the sort it was made for", () => {
    const price = { sort: "price", price: usd(5_000_000n), id: id("lst_next") } as const
    expect(accepted({ sort: "price", cursor: encodeCursor(price), limit: "2" })).toStrictEqual({
      ...EMPTY_QUERY,
      sort: "price",
      after: price,
      limit: 2
    })
    const relevance = { sort: "relevance", rank: 0.5, id: id("lst_rel") } as const
    expect(accepted({ q: "json", cursor: ` ${encodeCursor(relevance)} ` }).after).toStrictEqual(relevance)
    const newest = { sort: "newest", createdAt: new Date(1_700_000_000_000), id: id("lst_new") } as const
    expect(accepted({ cursor: encodeCursor(newest) }).after).toStrictEqual(newest)
    // relevance without text is newest: a newest cursor is the one that fits.
    expect(accepted({ sort: "relevance", cursor: encodeCursor(newest) }).after).toStrictEqual(newest)
  })

  it("every position round-trips through its cursor", () => {
    const listingId = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).map((s) => id(`lst_${s}`))
    const position: fc.Arbitrary<CatalogPosition> = fc.oneof(
      fc.record({ sort: fc.constant("relevance" as const), rank: fc.double({ min: 0, max: 1e6, noNaN: true }).map((r) => Object.is(r, -0) ? 0 : r), id: listingId }),
      fc.record({ sort: fc.constant("newest" as const), createdAt: fc.integer({ min: 0, max: 8.64e15 }).map((t) => new Date(t)), id: listingId }),
      fc.record({ sort: fc.constant("price" as const), price: fc.bigInt({ min: 0n, max: 999_999_999_999_999n }).map(usd), id: listingId }),
      fc.record({ sort: fc.constant("stars" as const), stars: fc.integer({ min: 0, max: 2_147_483_647 }), id: listingId })
    )
    fc.assert(fc.property(position, (p) => {
      expect(decodeCursor(encodeCursor(p), p.sort)).toEqual(p)
    }))
  })

  it("a cursor may hold letters and digits from either end of the alphabet", () => {
    // Cursors are base64url of ASCII JSON: sweeping ids and keys reaches A and Z, a and z, 0 and 9.
    const wanted = new Set("AZaz09")
    for (let n = 0; wanted.size > 0 && n < 5000; n++) {
      const position: CatalogPosition = { sort: "stars", stars: n, id: id(`lst_${n.toString(36)}`) }
      const cursor = encodeCursor(position)
      const reached = [...cursor].filter((c) => wanted.has(c))
      if (reached.length === 0) continue
      expect(decodeCursor(cursor, "stars"), cursor).toStrictEqual(position)
      reached.forEach((c) => wanted.delete(c))
    }
    expect([...wanted]).toStrictEqual([])
  })

  it("a cursor made for another sort is refused: the query says the cursor must fit its sort", () => {
    const price = encodeCursor({ sort: "price", price: usd(5_000_000n), id: id("lst_abc") })
    expect(decodeCursor(price, "newest")).toBeNull()
    expect(refusal({ cursor: price })).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
    expect(refusal({ sort: "stars", cursor: price })).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
    const ranked = encodeCursor({ sort: "relevance", rank: 1, id: id("lst_abc") })
    // Without text the order is newest, whatever was asked: a relevance cursor does not fit.
    expect(refusal({ sort: "relevance", cursor: ranked })).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
    for (const sort of CATALOG_SORTS) {
      for (const position of POSITIONS.filter((p) => p.sort !== sort)) {
        expect(decodeCursor(encodeCursor(position), sort)).toBeNull()
      }
    }
  })

  it("a cursor of up to 300 characters is read; a longer one is refused unread", () => {
    // JSON allows whitespace: padding the text stretches a valid cursor to any length.
    const padded = (chars: number) => {
      for (let spaces = 0; ; spaces++) {
        const cursor = rawCursor(`[1,"stars",7,${" ".repeat(spaces)}"lst_a"]`)
        if (cursor.length >= chars) return cursor
      }
    }
    const at300 = padded(300)
    expect(at300).toHaveLength(300)
    expect(decodeCursor(at300, "stars")).toStrictEqual({ sort: "stars", stars: 7, id: "lst_a" })
    const beyond = padded(301)
    expect(beyond.length).toBeGreaterThan(300)
    expect(decodeCursor(beyond, "stars")).toBeNull()
    expect(refusal({ sort: "stars", cursor: beyond })).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
    expect(decodeCursor("x".repeat(301), "stars")).toBeNull()
  })

  it("a cursor with characters outside URL-safe base64 is refused, even ones a base64 decoder would skip", () => {
    const good = encodeCursor({ sort: "stars", stars: 7, id: id("lst_abc") })
    expect(decodeCursor(good, "stars")).not.toBeNull()
    for (const cursor of [`${good}\n`, `\n${good}`, `${good.slice(0, 4)}\r\n${good.slice(4)}`, `${good}=`, `${good}==`, "garbage!", `${good}.`, `+${good}`]) {
      expect(decodeCursor(cursor, "stars"), JSON.stringify(cursor)).toBeNull()
    }
    expect(refusal({ sort: "stars", cursor: `${good}=` })).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
  })

  it("a cursor that is not base64 of JSON is refused", () => {
    for (const cursor of ["x", "xyz", "abcde", rawCursor("not json"), rawCursor("[1,\"stars\",7,\"lst_a\""), rawCursor("")]) {
      expect(decodeCursor(cursor, "stars"), cursor).toBeNull()
    }
  })

  it("a cursor of another shape or version is refused", () => {
    const shapes: ReadonlyArray<unknown> = [
      null, 7, "stars", { sort: "stars" },
      { 0: 1, 1: "stars", 2: 7, 3: "lst_a", length: 4 },
      [], [1, "stars", 7], [1, "stars", 7, "lst_a", "extra"], [1, "stars", 7, "lst_a", 0],
      [2, "stars", 7, "lst_a"], [0, "stars", 7, "lst_a"], ["1", "stars", 7, "lst_a"],
      [1, "STARS", 7, "lst_a"], [1, "price", "7", "lst_a"]
    ]
    for (const shape of shapes) {
      expect(decodeCursor(cursorOf(shape), "stars"), JSON.stringify(shape)).toBeNull()
    }
    expect(decodeCursor(cursorOf([1, "stars", 7, "lst_a"]), "stars")).toStrictEqual({ sort: "stars", stars: 7, id: "lst_a" })
  })

  it("a cursor naming something that is not a listing id is refused (a tampered id never reaches a query)", () => {
    for (const rawId of ["lst_'; DROP", "lst_", "abc", "LST_abc", `lst_${"a".repeat(65)}`, " lst_a", "lst_a ", 7, null, ["lst_a"]]) {
      expect(decodeCursor(cursorOf([1, "stars", 7, rawId]), "stars"), JSON.stringify(rawId)).toBeNull()
    }
    expect(decodeCursor(cursorOf([1, "stars", 7, `lst_${"a".repeat(64)}`]), "stars")).not.toBeNull()
    expect(decodeCursor(cursorOf([1, "stars", 7, "lst_Az09_-"]), "stars")).not.toBeNull()
  })

  it("a relevance cursor carries a finite, non-negative rank", () => {
    const at = (key: string) => decodeCursor(rawCursor(`[1,"relevance",${key},"lst_a"]`), "relevance")
    expect(at("0")).toStrictEqual({ sort: "relevance", rank: 0, id: "lst_a" })
    expect(at("0.125")).toStrictEqual({ sort: "relevance", rank: 0.125, id: "lst_a" })
    expect(at("1e300")).toStrictEqual({ sort: "relevance", rank: 1e300, id: "lst_a" })
    for (const key of ["-0.5", "-1", "1e999", "-1e999", "\"0.5\"", "null", "true", "[0.5]"]) {
      expect(at(key), key).toBeNull()
    }
  })

  it("a newest cursor carries a whole number of milliseconds within the range of a date", () => {
    const at = (key: string) => decodeCursor(rawCursor(`[1,"newest",${key},"lst_a"]`), "newest")
    expect(at("0")).toStrictEqual({ sort: "newest", createdAt: new Date(0), id: "lst_a" })
    expect(at("8640000000000000")).toStrictEqual({ sort: "newest", createdAt: new Date(8.64e15), id: "lst_a" })
    expect(at("1700000000000")).toStrictEqual({ sort: "newest", createdAt: new Date(1_700_000_000_000), id: "lst_a" })
    for (const key of ["-1", "-5", "8640000000000001", "1.5", "\"1700000000000\"", "\"soon\"", "null", "1e999", "9007199254740992"]) {
      expect(at(key), key).toBeNull()
    }
  })

  it("a price cursor carries an amount of 1 to 15 decimal digits, as a string", () => {
    const at = (key: string) => decodeCursor(rawCursor(`[1,"price",${key},"lst_a"]`), "price")
    expect(at("\"0\"")).toStrictEqual({ sort: "price", price: 0n, id: "lst_a" })
    expect(at("\"9\"")).toStrictEqual({ sort: "price", price: 9n, id: "lst_a" })
    expect(at("\"19990000\"")).toStrictEqual({ sort: "price", price: 19_990_000n, id: "lst_a" })
    expect(at(`"${"9".repeat(15)}"`)).toStrictEqual({ sort: "price", price: 999_999_999_999_999n, id: "lst_a" })
    for (const key of ["\"\"", `"${"1".repeat(16)}"`, "\"-1\"", "\"1.5\"", "\"12a\"", "\"a12\"", "\" 12\"", "\"12 \"", "5", "null"]) {
      expect(at(key), key).toBeNull()
    }
  })

  it("a stars cursor carries a whole number of stars from 0 to 2147483647", () => {
    const at = (key: string) => decodeCursor(rawCursor(`[1,"stars",${key},"lst_a"]`), "stars")
    expect(at("0")).toStrictEqual({ sort: "stars", stars: 0, id: "lst_a" })
    expect(at("2147483647")).toStrictEqual({ sort: "stars", stars: 2_147_483_647, id: "lst_a" })
    for (const key of ["-1", "2147483648", "1.5", "\"7\"", "null", "1e999"]) {
      expect(at(key), key).toBeNull()
    }
  })

  it("a bad cursor is refused in the query, naming the cursor", () => {
    for (const cursor of ["garbage!", "xyz", "x".repeat(301), cursorOf([1, "newest", -5, "lst_abc"]), cursorOf([2, "newest", 1, "lst_abc"])]) {
      expect(refusal({ cursor }), cursor).toStrictEqual({ field: "cursor", message: CURSOR_MESSAGE })
    }
  })
})

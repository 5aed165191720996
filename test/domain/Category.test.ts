import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { categorize, CATEGORIES } from "../../domain/rules/Category.js"


const repo = (fields: { topics?: ReadonlyArray<string>; description?: string | null; language?: string | null }) => ({
  topics: fields.topics ?? [],
  description: fields.description ?? null,
  language: fields.language ?? null
})

/** Names every plain object inherits: a lookup table keyed by user data must not answer for them. */
const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype)
const isPrototypeKey = (s: string | null) => s !== null && PROTOTYPE_KEYS.includes(s.toLowerCase())

describe("category of an indexed repo", () => {
  it.each([
    [{ topics: ["machine-learning"] }, "ai-ml"],
    [{ topics: ["LLM"] }, "ai-ml"],
    [{ topics: ["ethereum", "react"] }, "blockchain"],
    [{ topics: ["react"] }, "web"],
    [{ topics: ["docker"], description: "A react dashboard" }, "devops"],
    [{ description: "A tiny CLI for renaming files" }, "cli"],
    [{ description: "Awesome list of things" }, "docs"],
    [{ language: "Solidity" }, "blockchain"],
    [{ language: "Jupyter Notebook" }, "ai-ml"],
    [{ language: "Swift" }, "mobile"],
    [{ language: "HCL" }, "devops"],
    [{ language: "Rust" }, "library"],
    [{ description: "nothing to see" }, "other"],
    [{}, "other"]
  ] as const)("%j is %s", (fields, expected) => {
    expect(categorize(repo(fields))).toBe(expected)
  })

  it("topics decide before the description, the description before the language", () => {
    expect(categorize(repo({ topics: ["game"], description: "a web app", language: "Solidity" }))).toBe("games")
    expect(categorize(repo({ description: "a web app", language: "Solidity" }))).toBe("web")
  })

  it("is always one of the documented categories", () => {
    const word = fc.oneof(fc.string(), fc.constantFrom("ai", "web", "cli", "docs", "Game", "SQL", "HTML", "Shell"))
    const text = fc.oneof(fc.string({ unit: "binary" }), fc.array(word, { maxLength: 8 }).map((ws) => ws.join(" ")))
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 6 }),
        fc.option(text, { nil: null }),
        fc.option(fc.oneof(word, fc.string({ unit: "binary" })).filter((l) => !isPrototypeKey(l)), { nil: null }),
        (topics, description, language) => {
          expect(CATEGORIES).toContain(categorize({ topics, description, language }))
        }
      ),
      { numRuns: 1_000 }
    )
  })

  // Regression (was a bug): the language table is a plain object looked up with the lower-cased language, so a language whose
  // lower-case form is an Object.prototype member ("constructor", "Constructor", "__proto__") returns that member
  // (a function or an object) instead of a category.
  // Through HTTP, GET /r/<owner> of an owner with such a repo answers a 400 invalid_request about
  // `indexed.N.category` instead of the page.
  it("is one of the documented categories even for languages named like Object.prototype members", () => {
    for (const language of ["constructor", "Constructor", "__proto__"]) {
      expect(CATEGORIES, language).toContain(categorize(repo({ language })))
    }
  })
})

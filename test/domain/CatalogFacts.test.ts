import { describe, expect, it } from "@effect/vitest"
import { factsFrom, noFacts } from "../../domain/rules/CatalogFacts.js"
import { README_TEXT_LIMIT } from "../../domain/rules/SearchText.js"
import { aListing } from "../support/fixtures.js"

const repo = (fields: { topics?: ReadonlyArray<string>; stars?: number; description?: string | null; language?: string | null }) => ({
  topics: fields.topics ?? [],
  stars: fields.stars ?? 0,
  description: fields.description ?? null,
  language: fields.language ?? null
})

describe("catalog facts of a listed repo", () => {
  it("a listing nothing is known about has no topics, no stars, no README, and a category from its own description and language", () => {
    expect(noFacts(aListing({ description: "A tiny CLI for renaming files", language: "Rust" }))).toEqual({
      topics: [],
      stars: 0,
      category: "cli",
      readmeText: ""
    })
    expect(noFacts(aListing({ description: null, language: "Solidity" })).category).toBe("blockchain")
    expect(noFacts(aListing({ description: null, language: null })).category).toBe("other")
  })

  it("records the host's topics lower-cased, its stars, the category and the README as plain text", () => {
    expect(factsFrom(repo({ topics: ["React", "CLI"], stars: 42, language: "TypeScript" }), "# Title\n\nSee [the docs](https://x.dev).")).toEqual({
      topics: ["react", "cli"],
      stars: 42,
      category: "web",
      readmeText: "Title See the docs."
    })
  })

  it("a repo without a README records an empty text", () => {
    expect(factsFrom(repo({}), null).readmeText).toBe("")
    expect(factsFrom(repo({}), "").readmeText).toBe("")
  })

  it("the README text is cut to its limit", () => {
    expect(factsFrom(repo({}), "word ".repeat(README_TEXT_LIMIT)).readmeText).toHaveLength(README_TEXT_LIMIT)
  })

  it.each([
    [-5, 0],
    [12.9, 12],
    [2_147_483_647, 2_147_483_647],
    [2_147_483_648, 2_147_483_647],
    [Number.MAX_SAFE_INTEGER, 2_147_483_647]
  ])("a star count of %d is recorded as %d (a whole number within the store's integer)", (stars, recorded) => {
    expect(factsFrom(repo({ stars }), null).stars).toBe(recorded)
  })
})

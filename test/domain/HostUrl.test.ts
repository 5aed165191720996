import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { isPlausibleOwner, isPlausibleRepoName, parseHostUrl } from "../../domain/rules/HostUrl.js"

const alnum = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
/** GitHub owners: 1-39 characters, letters, digits and hyphens, not starting with a hyphen. */
const owner = fc.tuple(alnum, fc.string({ unit: fc.oneof(alnum, fc.constant("-")), maxLength: 38 })).map(([a, b]) => a + b)
/** GitHub repo names: 1-100 of letters, digits, `.`, `_`, `-`; not `.` or `..`, and not ending in `.git`. */
const repoName = fc.string({ unit: fc.oneof(alnum, fc.constantFrom(".", "_", "-")), minLength: 1, maxLength: 100 })
  .filter((n) => n !== "." && n !== ".." && !/\.git$/i.test(n))

describe("host_url parsing", () => {
  it.each([
    ["https://github.com/octo-org/widget", "octo-org", "widget"],
    ["https://github.com/octo-org/widget/", "octo-org", "widget"],
    ["https://github.com/octo-org/widget//", "octo-org", "widget"],
    ["https://github.com/octo-org/widget.git", "octo-org", "widget"],
    ["https://github.com/octo-org/widget.git/", "octo-org", "widget"],
    ["https://www.github.com/octo-org/widget", "octo-org", "widget"],
    ["https://GITHUB.com/Octo-Org/Widget", "Octo-Org", "Widget"],
    ["https://github.com/a/b.c_d-e", "a", "b.c_d-e"],
    ["https://github.com/o/.github", "o", ".github"],
    [`https://github.com/${"a".repeat(39)}/${"r".repeat(100)}`, "a".repeat(39), "r".repeat(100)]
  ])("accepts %s", (url, expectedOwner, expectedName) => {
    expect(parseHostUrl(url)).toEqual(Either.right({ owner: expectedOwner, name: expectedName }))
  })

  it.each([
    "",
    "github.com/octo-org/widget",
    "http://github.com/octo-org/widget",
    "ftp://github.com/octo-org/widget",
    "git@github.com:octo-org/widget.git",
    "ssh://git@github.com/octo-org/widget",
    "https://gitlab.com/octo-org/widget",
    "https://evilgithub.com/octo-org/widget",
    "https://github.com.evil.example/octo-org/widget",
    "https://github.com@evil.example/octo-org/widget",
    "https://user:pass@github.com/octo-org/widget",
    "https://user@github.com/octo-org/widget",
    "https://:secret@github.com/octo-org/widget",
    "https://github.com:8443/octo-org/widget",
    "https://github.com/octo-org",
    "https://github.com/octo-org/",
    "https://github.com/",
    "https://github.com/octo-org/widget/tree/main",
    "https://github.com/octo-org/widget/issues",
    "https://github.com/octo-org/widget?tab=readme",
    "https://github.com/octo-org/widget#readme",
    "https://github.com/octo-org/.",
    "https://github.com/octo-org/..",
    "https://github.com/octo-org/.git",
    "https://github.com/-octo/widget",
    "https://github.com/octo_org/widget",
    "https://github.com/octo-org/wid get",
    "https://github.com/octo-org/wid%20get",
    "https://github.com/octo-org/wid%2Fget",
    "https://github.com/octo-org/w%C3%BCdget",
    `https://github.com/${"a".repeat(40)}/widget`,
    `https://github.com/octo-org/${"r".repeat(101)}`,
    "https://github.com//octo-org/widget",
    "javascript:alert(1)"
  ])("refuses %j, naming the shape it must have", (url) => {
    expect(parseHostUrl(url)).toEqual(Either.left("must be a GitHub repository URL like https://github.com/<owner>/<repo>"))
  })

  it("every valid owner/repo pair round-trips, with the tolerated spellings", () => {
    fc.assert(
      fc.property(owner, repoName, fc.constantFrom("", "/", ".git", ".git/"), fc.boolean(), (o, n, suffix, www) => {
        const url = `https://${www ? "www." : ""}github.com/${o}/${n}${suffix}`
        expect(parseHostUrl(url)).toEqual(Either.right({ owner: o, name: n }))
      }),
      { numRuns: 1_000 }
    )
  })

  it("whatever it accepts is a plausible owner and repo name; it never throws", () => {
    const anyUrl = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.webUrl(),
      fc.tuple(fc.string(), fc.string()).map(([o, n]) => `https://github.com/${o}/${n}`)
    )
    fc.assert(
      fc.property(anyUrl, (input) => {
        const parsed = parseHostUrl(input)
        if (Either.isRight(parsed)) {
          expect(isPlausibleOwner(parsed.right.owner)).toBe(true)
          expect(isPlausibleRepoName(parsed.right.name)).toBe(true)
        }
      }),
      { numRuns: 1_000 }
    )
  })

  it("page-path names are checked with the same rules", () => {
    expect(isPlausibleOwner("octo-org")).toBe(true)
    expect(isPlausibleOwner("")).toBe(false)
    expect(isPlausibleOwner("..")).toBe(false)
    expect(isPlausibleOwner("a\u0000")).toBe(false)
    expect(isPlausibleOwner("a".repeat(40))).toBe(false)
    expect(isPlausibleRepoName(".")).toBe(false)
    expect(isPlausibleRepoName("..")).toBe(false)
    expect(isPlausibleRepoName("...")).toBe(true)
    expect(isPlausibleRepoName("a/b")).toBe(false)
    expect(isPlausibleRepoName("r".repeat(101))).toBe(false)
  })

  it("a repo named `..git` or `...git` is refused: without `.git` it would name the parent directory", () => {
    for (const name of ["..git", "...git", "..GIT", ".git"]) {
      expect(Either.isLeft(parseHostUrl(`https://github.com/octo-org/${name}`)), name).toBe(true)
    }
    expect(parseHostUrl("https://github.com/octo-org/a..git")).toEqual(Either.right({ owner: "octo-org", name: "a." }))
  })
})

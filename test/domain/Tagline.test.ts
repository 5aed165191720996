import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { TAGLINE_MAX_CODE_POINTS, validateTagline } from "../../domain/rules/Tagline.js"

const isControl = (cp: number) => cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 || cp === 0x2029
/** Printable code points from every plane, none of them a control or a line/paragraph separator. */
const printable = fc.integer({ min: 0x20, max: 0x10ffff })
  .filter((cp) => !isControl(cp) && !(cp >= 0xd800 && cp <= 0xdfff))
  .map((cp) => String.fromCodePoint(cp))
const breaking = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }),
  fc.integer({ min: 0x7f, max: 0x9f }),
  fc.constantFrom(0x2028, 0x2029)
).map((cp) => String.fromCodePoint(cp))

describe("storefront tagline", () => {
  it("140 characters is fine, ASCII or astral (emoji count once)", () => {
    expect(TAGLINE_MAX_CODE_POINTS).toBe(140)
    expect(validateTagline("a".repeat(140))).toEqual(Either.right("a".repeat(140)))
    const emoji = "😀".repeat(140) // 280 UTF-16 units
    expect(validateTagline(emoji)).toEqual(Either.right(emoji))
    const mixed = "𝔘".repeat(70) + "é".repeat(70)
    expect(validateTagline(mixed)).toEqual(Either.right(mixed))
  })

  it("141 characters is refused", () => {
    expect(Either.isLeft(validateTagline("a".repeat(141)))).toBe(true)
    expect(Either.isLeft(validateTagline("😀".repeat(141)))).toBe(true)
    expect(Either.isLeft(validateTagline("😀".repeat(140) + "a"))).toBe(true)
  })

  it("line breaks, control characters and U+2028/U+2029 are refused", () => {
    for (const bad of ["a\nb", "a\rb", "a\r\nb", "tab\there", "nul\u0000", "esc\u001b[31m", "del\u007f", "nel\u0085", "ls\u2028", "ps\u2029"]) {
      expect(validateTagline(bad), JSON.stringify(bad)).toEqual(Either.left("must be one line of plain text without line breaks or control characters"))
    }
  })

  it("any printable text of at most 140 code points is kept exactly as given (HTML is escaped on display, not here)", () => {
    fc.assert(
      fc.property(fc.string({ unit: printable, maxLength: 140 }), (text) => {
        expect(validateTagline(text)).toEqual(Either.right(text))
      }),
      { numRuns: 1_000 }
    )
    expect(validateTagline("<script>alert(1)</script> & \"quotes\"")).toEqual(Either.right("<script>alert(1)</script> & \"quotes\""))
  })

  it("a control or separator anywhere in otherwise valid text is refused", () => {
    fc.assert(
      fc.property(fc.string({ unit: printable, maxLength: 100 }), breaking, fc.nat(), (text, bad, at) => {
        const points = [...text]
        points.splice(at % (points.length + 1), 0, bad)
        expect(Either.isLeft(validateTagline(points.join("")))).toBe(true)
      }),
      { numRuns: 1_000 }
    )
  })

  it("more than 140 printable code points is refused, whatever they are", () => {
    fc.assert(fc.property(fc.string({ unit: printable, minLength: 141, maxLength: 300 }), (text) => {
      expect(Either.isLeft(validateTagline(text))).toBe(true)
    }))
  })

  it("a lone surrogate anywhere is refused as not text; a proper surrogate pair (an emoji) is kept", () => {
    const refusedAsNotText = Either.left("must be valid Unicode text")
    for (const text of ["\ud800", "\udc00", "a\ud83d", "\ude00a", "a\ud83dz", "a\ude00\ud83d", "🦀\ud800", "\udc00🦀"]) {
      expect(validateTagline(text), JSON.stringify(text)).toEqual(refusedAsNotText)
    }
    expect(validateTagline("a\ud83d\ude00z")).toEqual(Either.right("a😀z"))
  })

  it("exactly 140 code points is kept and 141 refused, counted by code point whatever the mix", () => {
    const mixed = "🦀a".repeat(70)
    expect([...mixed]).toHaveLength(TAGLINE_MAX_CODE_POINTS)
    expect(validateTagline(mixed)).toEqual(Either.right(mixed))
    expect(validateTagline(`${mixed}b`)).toEqual(Either.left("must be at most 140 characters"))
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { formatUsd, MAX_PRICE, MIN_PRICE, parsePriceUsd } from "../../domain/Money.js"

/** Written out here on purpose, not imported: the test must not share the implementation's regex. */
const CONTRACT_PATTERN = /^[0-9]{1,6}\.[0-9]{2}$/
const pad2 = (n: number) => String(n).padStart(2, "0")
const priceOfCents = (c: number) => `${Math.floor(c / 100)}.${pad2(c % 100)}`

const anyString = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  // Near misses: digit runs, dots, signs, exponents, spaces and look-alike digits.
  fc.string({ unit: fc.constantFrom("0", "1", "5", "9", ".", ",", "-", "+", "e", " ", "\n", "１", "٠", "_"), maxLength: 12 })
)

describe("price_usd parsing", () => {
  it("every integer number of cents from 0.01 to 100000.00 parses to cents × 10_000 atomic units", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (c) => {
        expect(parsePriceUsd(priceOfCents(c))).toEqual(Either.right(BigInt(c) * 10_000n))
      }),
      { numRuns: 2_000 }
    )
  })

  it("round-trips through formatUsd", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (c) => {
        const text = priceOfCents(c)
        const atomic = Either.getOrThrow(parsePriceUsd(text))
        expect(formatUsd(atomic)).toBe(text)
        expect(parsePriceUsd(formatUsd(atomic))).toEqual(Either.right(atomic))
      }),
      { numRuns: 2_000 }
    )
  })

  it("the documented example and the bounds", () => {
    expect(parsePriceUsd("12.34")).toEqual(Either.right(12_340_000n))
    expect(parsePriceUsd("0.01")).toEqual(Either.right(10_000n))
    expect(parsePriceUsd("100000.00")).toEqual(Either.right(100_000_000_000n))
    expect(MIN_PRICE).toBe(10_000n)
    expect(MAX_PRICE).toBe(100_000_000_000n)
    // Leading zeros fit the pattern and mean the same amount.
    expect(parsePriceUsd("000012.34")).toEqual(Either.right(12_340_000n))
  })

  it("0.00 is too small; above 100000.00 is too large", () => {
    expect(parsePriceUsd("0.00")).toEqual(Either.left("too_small"))
    expect(parsePriceUsd("000000.00")).toEqual(Either.left("too_small"))
    expect(parsePriceUsd("100000.01")).toEqual(Either.left("too_large"))
    expect(parsePriceUsd("999999.99")).toEqual(Either.left("too_large"))
  })

  it("refuses everything that does not match ^[0-9]{1,6}\\.[0-9]{2}$", () => {
    for (const bad of [
      "", "1", "12", "1.5", "1.234", ".50", "1.", "1,00", " 1.00", "1.00 ", "1.00\n", "\n1.00", "+1.00", "-1.00",
      "1e2", "1e2.00", "0x1.00", "1234567.00", "１.００", "١.٠٠", "1.0O", "1_000.00", "12.34.56", "NaN", "Infinity",
      "12.34\u0000"
    ]) {
      expect(parsePriceUsd(bad), JSON.stringify(bad)).toEqual(Either.left("format"))
    }
    fc.assert(
      fc.property(anyString.filter((s) => !CONTRACT_PATTERN.test(s)), (s) => {
        expect(parsePriceUsd(s)).toEqual(Either.left("format"))
      }),
      { numRuns: 2_000 }
    )
  })

  it("everything that matches the pattern is accepted or refused by range only", () => {
    const matching = fc.tuple(fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 99 }))
      .map(([dollars, cents]) => `${dollars}.${pad2(cents)}`)
    fc.assert(fc.property(matching, (s) => {
      const cents = BigInt(s.replace(".", ""))
      const result = parsePriceUsd(s)
      if (cents === 0n) expect(result).toEqual(Either.left("too_small"))
      else if (cents > 10_000_000n) expect(result).toEqual(Either.left("too_large"))
      else expect(result).toEqual(Either.right(cents * 10_000n))
    }))
  })

  it("never throws, whatever the string", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const result = parsePriceUsd(s)
        expect(Either.isEither(result)).toBe(true)
      }),
      { numRuns: 2_000 }
    )
  })
})

describe("formatUsd", () => {
  it("prints two decimals and keeps integers beyond a double's precision", () => {
    expect(formatUsd(10_000n)).toBe("0.01")
    expect(formatUsd(0n)).toBe("0.00")
    expect(formatUsd(12_340_000n)).toBe("12.34")
    // 2^53 + 1 dollars: a double would round it to ...992.
    expect(formatUsd(9_007_199_254_740_993n * 1_000_000n)).toBe("9007199254740993.00")
  })

  it("a negative amount prints with a leading minus, never as the positive amount", () => {
    expect(formatUsd(-12_340_000n)).toBe("-12.34")
    expect(formatUsd(-10_000n)).toBe("-0.01")
    expect(formatUsd(-100_000_000_000n)).toBe("-100000.00")
  })

  it("for any whole number of cents, parse(format(x)) = x inside the allowed range", () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10_000_000n }), (cents) => {
      const atomic = cents * 10_000n
      expect(parsePriceUsd(formatUsd(atomic))).toEqual(Either.right(atomic))
    }))
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { normalizeEmail } from "../../domain/rules/Email.js"


describe("email normalisation", () => {
  it.each([
    ["seller@example.com", "seller@example.com"],
    ["Seller@Example.COM", "seller@example.com"],
    ["  seller@example.com\t", "seller@example.com"],
    ["first.last+tag@sub.example.co.uk", "first.last+tag@sub.example.co.uk"],
    ["a@b.co", "a@b.co"],
    ["o'brien@example.ie", "o'brien@example.ie"],
    ["user@xn--bcher-kva.example", "user@xn--bcher-kva.example"]
  ])("accepts %j as %j", (input, expected) => {
    expect(normalizeEmail(input)).toEqual(Either.right(expected))
  })

  it.each([
    "",
    "plain",
    "@example.com",
    "seller@",
    "seller@@example.com",
    "a@b@example.com",
    "sel ler@example.com",
    "seller@exa mple.com",
    "seller@localhost",
    "seller@example",
    "seller@example.com.",
    "seller@.example.com",
    "seller@-example.com",
    "seller@example-.com",
    "seller@example..com",
    "seller@example.123",
    "seller@1.2.3.4",
    "seller@[127.0.0.1]",
    "\"quoted\"@example.com",
    "a<b@example.com",
    "a,b@example.com",
    "a;b@example.com",
    "a\nb@example.com",
    "a\r\nBcc: victim@example.com@example.com",
    `${"a".repeat(65)}@example.com`,
    `a@${"b".repeat(64)}.com`,
    `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(59)}.com` // 256 characters
  ])("refuses %j, saying it must be an email address", (input) => {
    expect(normalizeEmail(input)).toEqual(Either.left("must be an email address"))
  })

  // Regression (was a bug): control characters that are not whitespace (NUL, SOH, DEL, ...) pass the check. They are not part of any
  // email address, and PostgreSQL cannot store NUL in text: on the SQL storage POST /auth/magic-link answers 500.
  it("refuses control characters anywhere in the address", () => {
    for (const c of ["\u0000", "\u0001", "\u001b", "\u007f", "\u0085"]) {
      expect(Either.isLeft(normalizeEmail(`a${c}b@example.com`)), JSON.stringify(c)).toBe(true)
    }
  })

  it("the result is lower-case, trimmed, has one @ and a dotted domain, and normalising it again changes nothing", () => {
    const emailish = fc.oneof(
      fc.emailAddress(),
      fc.emailAddress().map((e) => ` ${e.toUpperCase()} `),
      fc.string({ unit: "binary" }),
      fc.tuple(fc.string(), fc.string()).map(([l, d]) => `${l}@${d}`)
    )
    fc.assert(
      fc.property(emailish, (input) => {
        const result = normalizeEmail(input)
        if (Either.isLeft(result)) return
        const email = result.right
        expect(email).toBe(email.trim().toLowerCase())
        expect(email.split("@")).toHaveLength(2)
        expect(email.length).toBeLessThanOrEqual(254)
        expect(email.split("@")[1]).toContain(".")
        expect(email).not.toMatch(/\s/)
        expect(normalizeEmail(email)).toEqual(Either.right(email))
      }),
      { numRuns: 1_000 }
    )
  })

  it("accepts ordinary generated addresses", () => {
    // fast-check's generator follows RFC 5322 closely; keep to the common subset this plain check promises.
    const ordinary = fc.tuple(
      fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}$/),
      fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/),
      fc.constantFrom("com", "org", "dev", "co", "io")
    ).map(([local, domain, tld]) => `${local}@${domain}.${tld}`)
    fc.assert(fc.property(ordinary, (email) => {
      expect(normalizeEmail(email)).toEqual(Either.right(email))
    }))
  })

  it("the RFC 5321 limits hold at their exact boundary: a 64-character local part and a 254-character address pass", () => {
    const domain189 = `${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`
    const at254 = `${"a".repeat(64)}@${domain189}`
    expect(at254).toHaveLength(254)
    expect(normalizeEmail(at254)).toEqual(Either.right(at254))
    expect(Either.isLeft(normalizeEmail(`${"a".repeat(64)}@${domain189.replace("d.com", "dd.com")}`))).toBe(true)
    expect(normalizeEmail(`${"a".repeat(64)}@example.com`)).toEqual(Either.right(`${"a".repeat(64)}@example.com`))
    expect(Either.isLeft(normalizeEmail(`${"a".repeat(65)}@example.com`))).toBe(true)
  })
})

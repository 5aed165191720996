import { describe, expect, it } from "@effect/vitest"
import { createHmac, timingSafeEqual } from "node:crypto"
import { SaleId } from "../../domain/Ids.js"
import { parseReceipt, RECEIPT_TTL_MS, receiptExpired, receiptToken } from "../../domain/rules/Receipt.js"

// A real MAC, as the SecretBox port provides one: a forged or altered tag must not verify.
const KEY = "receipt-test-key"
const mac = (message: string) => createHmac("sha256", KEY).update(message).digest("base64url")
const verify = (message: string, tag: string) => {
  const expected = Buffer.from(mac(message))
  const given = Buffer.from(tag)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
const acceptAnyTag = () => true
const SALE = SaleId.make("sale_01HZY3")

describe("download receipts", () => {
  it("a receipt names its sale and reads back as that sale", () => {
    const token = receiptToken(SALE, mac)
    expect(token.startsWith(`${SALE}.`)).toBe(true)
    expect(parseReceipt(token, verify)).toBe(SALE)
  })

  it("the same sale always yields the same receipt (nothing is stored per receipt)", () => {
    expect(receiptToken(SALE, mac)).toBe(receiptToken(SALE, mac))
  })

  it("a receipt's MAC covers its purpose, so a MAC made for another purpose does not open a download", () => {
    expect(parseReceipt(`${SALE}.${mac(SALE)}`, verify)).toBeNull()
    expect(receiptToken(SALE, mac)).toBe(`${SALE}.${mac(`receipt:${SALE}`)}`)
  })

  it("a receipt with an altered tag or another sale's id is refused", () => {
    const token = receiptToken(SALE, mac)
    expect(parseReceipt(`${token}x`, verify)).toBeNull()
    expect(parseReceipt(token.replace(SALE, "sale_other"), verify)).toBeNull()
  })

  it("a token without a sale id or without a tag is refused, even by a verifier that accepts any tag", () => {
    expect(parseReceipt("no-dot-at-all", acceptAnyTag)).toBeNull()
    expect(parseReceipt(`.${mac("receipt:")}`, verify)).toBeNull()
    expect(parseReceipt(".anything", acceptAnyTag)).toBeNull()
  })

  it("a token longer than 200 characters is refused before any MAC is checked; 200 is still read", () => {
    const at200 = `${"s".repeat(150)}.${"t".repeat(49)}`
    expect(at200).toHaveLength(200)
    expect(parseReceipt(at200, acceptAnyTag)).toBe("s".repeat(150))
    let asked = false
    expect(parseReceipt(`${at200}t`, () => (asked = true))).toBeNull()
    expect(asked).toBe(false)
  })

  it("the sale id is everything before the first dot; the tag is everything after it", () => {
    const seen: Array<[string, string]> = []
    expect(parseReceipt("sale_a.tag.with.dots", (m, t) => (seen.push([m, t]), true))).toBe("sale_a")
    expect(seen).toEqual([["receipt:sale_a", "tag.with.dots"]])
  })

  it("a receipt opens downloads for exactly 7 days after settlement", () => {
    const settled = new Date("2024-03-01T10:00:00.000Z")
    expect(RECEIPT_TTL_MS).toBe(7 * 24 * 60 * 60 * 1000)
    expect(receiptExpired(settled, settled)).toBe(false)
    expect(receiptExpired(settled, new Date(settled.getTime() + RECEIPT_TTL_MS))).toBe(false)
    expect(receiptExpired(settled, new Date(settled.getTime() + RECEIPT_TTL_MS + 1))).toBe(true)
  })
})

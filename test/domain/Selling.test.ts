import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { AccountId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { AtomicAmount, formatUsd } from "../../domain/Money.js"
import { isSelling, sellingNote } from "../../domain/rules/Selling.js"
import { Address } from "../../domain/Wallet.js"
import { aListing, at } from "../support/fixtures.js"

const BASE = Address.make("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
const SOLANA = Address.make("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")

const listing = fc.record({
  live: fc.boolean(),
  price: fc.option(fc.bigInt({ min: 1n, max: 10_000_000n }).map((c) => AtomicAmount.make(c * 10_000n)), { nil: null }),
  base: fc.boolean(),
  solana: fc.boolean(),
  anonymous: fc.boolean()
}).map((f) => ({
  facts: f,
  listing: aListing({
    status: f.live ? "live" : "taken_down",
    takenDownAt: f.live ? null : at("2024-03-02T00:00:00.000Z"),
    price: f.price,
    payTo: { base: f.base ? BASE : null, solana: f.solana ? SOLANA : null },
    accountId: f.anonymous ? null : AccountId.make("acct_seller")
  })
}))

const priced = (price: bigint | null, payTo: Listing["payTo"], status: "live" | "taken_down" = "live") =>
  aListing({ price: price === null ? null : AtomicAmount.make(price), payTo, status })

describe("selling", () => {
  it("is true exactly when the listing is live, has a price and at least one payout address", () => {
    fc.assert(fc.property(listing, ({ facts, listing }) => {
      expect(isSelling(listing)).toBe(facts.live && facts.price !== null && (facts.base || facts.solana))
    }))
  })

  it("examples", () => {
    expect(isSelling(priced(12_340_000n, { base: BASE, solana: null }))).toBe(true)
    expect(isSelling(priced(12_340_000n, { base: null, solana: SOLANA }))).toBe(true)
    expect(isSelling(priced(null, { base: BASE, solana: SOLANA }))).toBe(false)
    expect(isSelling(priced(12_340_000n, { base: null, solana: null }))).toBe(false)
    expect(isSelling(priced(12_340_000n, { base: BASE, solana: SOLANA }, "taken_down"))).toBe(false)
  })
})

describe("note", () => {
  it("is one sentence saying what is missing, or what is on sale and on which chains", () => {
    fc.assert(fc.property(listing, ({ facts, listing }) => {
      const note = sellingNote(listing)
      expect(note).toMatch(/^[A-Z].*\.$/)
      expect(note).not.toMatch(/[\r\n]/)
      // One sentence: no full stop followed by another sentence (decimal points are fine).
      expect(note.slice(0, -1)).not.toMatch(/\.\s/)
      const selling = isSelling(listing)
      if (!facts.live) {
        expect(note).toMatch(/taken down/i)
        expect(note).not.toMatch(/on sale/i)
        return
      }
      if (selling) {
        expect(note).toContain(formatUsd(facts.price!))
        expect(note).toMatch(/on sale/i)
        expect(note.includes("Base")).toBe(facts.base)
        expect(note.includes("Solana")).toBe(facts.solana)
        return
      }
      expect(note).toMatch(/^Not selling/)
      expect(note.includes("price_usd")).toBe(facts.price === null)
      expect(/wallet/.test(note)).toBe(!facts.base && !facts.solana)
      // An anonymous listing has no account default to fall back to: the note must not suggest one.
      if (facts.anonymous) expect(note).not.toMatch(/account default/)
    }))
  })

  it("examples", () => {
    expect(sellingNote(priced(12_340_000n, { base: BASE, solana: SOLANA }))).toBe("On sale for 12.34 USDC on Base and Solana.")
    expect(sellingNote(priced(null, { base: BASE, solana: null }))).toMatch(/price_usd/)
    expect(sellingNote(priced(500_000n, { base: null, solana: null }))).toMatch(/wallet_base or wallet_solana/)
  })

  it("tells a signed-in seller that an account default wallet also counts, and an anonymous seller only the listing's", () => {
    const unpaid = (accountId: AccountId | null, price: bigint | null) =>
      aListing({ price: price === null ? null : AtomicAmount.make(price), payTo: { base: null, solana: null }, accountId })
    const owned = AccountId.make("acct_seller")
    expect(sellingNote(unpaid(owned, 500_000n))).toBe(
      "Not selling: add a payout wallet (wallet_base or wallet_solana, on the listing or as an account default)."
    )
    expect(sellingNote(unpaid(null, 500_000n))).toBe("Not selling: add a payout wallet (wallet_base or wallet_solana).")
    expect(sellingNote(unpaid(owned, null))).toBe(
      "Not selling: set price_usd and add a payout wallet (wallet_base or wallet_solana, on the listing or as an account default)."
    )
    expect(sellingNote(unpaid(null, null))).toBe("Not selling: set price_usd and add a payout wallet (wallet_base or wallet_solana).")
  })
})

import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { fillChain, keepAllWallets, lacksChain, resolvePayTo, type WalletPatches } from "../../domain/rules/PayoutResolution.js"
import { Patch } from "../../domain/rules/ThreeState.js"
import { Address, type Chain, CHAINS, type Wallets } from "../../domain/Wallet.js"
import { aListing } from "../support/fixtures.js"

// Distinct, recognisable addresses: which one comes out tells where it came from.
const LISTING = Address.make("0xListingAddress")
const CARRIED = Address.make("0xCarriedAddress")
const DEFAULT = Address.make("0xAccountDefault")
const OTHER_DEFAULT = Address.make("0xAnotherDefault")

const address = fc.constantFrom(LISTING, CARRIED, DEFAULT, OTHER_DEFAULT, Address.make("SoLaNaAddReSS1111111111111111111111111111111"))
const maybeAddress = fc.option(address, { nil: null })
const wallets = fc.record({ base: maybeAddress, solana: maybeAddress })
const patch = fc.oneof(
  fc.constant(Patch.Keep<Address>()),
  fc.constant(Patch.Clear<Address>()),
  address.map((value) => Patch.Set({ value }))
)
const patches = fc.record({ base: patch, solana: patch })
/** null = anonymous listing (no proved identity). */
const defaults = fc.option(wallets, { nil: null })

const keep = Patch.Keep<Address>()
const clear = Patch.Clear<Address>()
const set = (value: Address) => Patch.Set({ value })
const only = (chain: Chain, p: ReturnType<typeof set> | typeof keep): WalletPatches => ({ ...keepAllWallets, [chain]: p })

describe("payout resolution", () => {
  it("an address named on the listing wins over what it carries and over the account default", () => {
    fc.assert(fc.property(wallets, patches, defaults, (carried, p, d) => {
      const out = resolvePayTo(carried, p, d)
      for (const chain of CHAINS) {
        const named = p[chain]
        if (named._tag === "Set") expect(out[chain]).toBe(named.value)
      }
    }))
  })

  it("Keep keeps a carried address even when the account default differs", () => {
    fc.assert(fc.property(wallets, wallets, (carried, d) => {
      const out = resolvePayTo(carried, keepAllWallets, d)
      for (const chain of CHAINS) if (carried[chain] !== null) expect(out[chain]).toBe(carried[chain])
    }))
    const out = resolvePayTo({ base: CARRIED, solana: null }, keepAllWallets, { base: DEFAULT, solana: null })
    expect(out.base).toBe(CARRIED)
  })

  it("Keep with nothing carried takes the account default (account listings only)", () => {
    expect(resolvePayTo({ base: null, solana: null }, keepAllWallets, { base: DEFAULT, solana: null }))
      .toEqual({ base: DEFAULT, solana: null })
  })

  it("Clear drops the listing's address and falls back to the account default", () => {
    fc.assert(fc.property(wallets, wallets, fc.constantFrom<Chain>("base", "solana"), (carried, d, chain) => {
      const out = resolvePayTo(carried, { ...keepAllWallets, [chain]: clear }, d)
      expect(out[chain]).toBe(d[chain])
    }))
    expect(resolvePayTo({ base: CARRIED, solana: null }, { base: clear, solana: keep }, { base: DEFAULT, solana: null }).base)
      .toBe(DEFAULT)
    expect(resolvePayTo({ base: CARRIED, solana: null }, { base: clear, solana: keep }, { base: null, solana: null }).base)
      .toBeNull()
  })

  it("an anonymous listing never gets an account default, whatever it carries or is sent", () => {
    fc.assert(fc.property(wallets, patches, (carried, p) => {
      const out = resolvePayTo(carried, p, null)
      for (const chain of CHAINS) {
        const named = p[chain]
        const expected = named._tag === "Set" ? named.value : named._tag === "Keep" ? carried[chain] : null
        expect(out[chain]).toBe(expected)
      }
    }))
    expect(resolvePayTo({ base: null, solana: null }, { base: clear, solana: keep }, null)).toEqual({ base: null, solana: null })
  })

  it("every combination of carried, patch and default resolves per the rule, each chain on its own", () => {
    fc.assert(
      fc.property(wallets, patches, defaults, (carried, p, d) => {
        const out = resolvePayTo(carried, p, d)
        for (const chain of CHAINS) {
          const fallback = d === null ? null : d[chain]
          const named = p[chain]
          const expected = named._tag === "Set" ? named.value : named._tag === "Keep" ? (carried[chain] ?? fallback) : fallback
          expect(out[chain], `${chain}: carried=${carried[chain]} patch=${named._tag} default=${fallback}`).toBe(expected)
        }
      }),
      { numRuns: 1_000 }
    )
  })

  it("a chain's result depends only on that chain's inputs", () => {
    fc.assert(fc.property(wallets, patches, defaults, patch, maybeAddress, (carried, p, d, otherPatch, otherCarried) => {
      const before = resolvePayTo(carried, p, d)
      const after = resolvePayTo({ ...carried, solana: otherCarried }, { ...p, solana: otherPatch }, d)
      expect(after.base).toBe(before.base)
    }))
  })

  it("the same inputs always give the same addresses (no hidden state)", () => {
    const carried: Wallets = { base: CARRIED, solana: null }
    expect(resolvePayTo(carried, only("solana", set(LISTING)), { base: DEFAULT, solana: OTHER_DEFAULT }))
      .toEqual(resolvePayTo(carried, only("solana", set(LISTING)), { base: DEFAULT, solana: OTHER_DEFAULT }))
  })
})

describe("filling a chain from a new account wallet", () => {
  it("fills only a chain the listing lacks; a carried address never moves", () => {
    fc.assert(fc.property(wallets, fc.constantFrom<Chain>("base", "solana"), address, (payTo, chain, added) => {
      const out = fillChain(payTo, chain, added)
      expect(out[chain]).toBe(payTo[chain] ?? added)
      for (const other of CHAINS) if (other !== chain) expect(out[other]).toBe(payTo[other])
    }))
  })

  it("lacksChain is true exactly when the listing carries no address for the chain", () => {
    const listing = aListing({ payTo: { base: CARRIED, solana: null } })
    expect(lacksChain(listing, "base")).toBe(false)
    expect(lacksChain(listing, "solana")).toBe(true)
  })
})

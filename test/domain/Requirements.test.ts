import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { RepoRef } from "../../domain/Ids.js"
import { AtomicAmount } from "../../domain/Money.js"
import { MAX_TIMEOUT_SECONDS, matchesTerms, matchRequirement, requirementsOf } from "../../domain/rules/Requirements.js"
import { Address, type Chain, type ChainFacts } from "../../domain/Wallet.js"
import type { PaymentRequirement, SubmittedPayment } from "../../ports/PaymentFacilitator.js"
import { aCheckout, aListing } from "../support/fixtures.js"

const BASE_PAY_TO = Address.make("0xAbCdEf0123456789aBcDeF0123456789AbCdEf01")
const SOLANA_PAY_TO = Address.make("So1anaPayee11111111111111111111111111111111")
const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const USDC_SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
const PRICE = AtomicAmount.make(12_340_000n)

const facts = (chain: Chain): ChainFacts => chain === "base"
  ? { chain, livemode: true, network: "eip155:8453", v1Network: "base", asset: USDC_BASE, extra: { name: "USD Coin", version: "2" } }
  : { chain, livemode: true, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", v1Network: "solana", asset: USDC_SOLANA, extra: {} }
const facilitatorExtra = (chain: Chain) => (chain === "solana" ? { feePayer: "FeePayer1111" } : {})
const RESOURCE = "https://market.example/checkout/chk_1"

const checkoutFor = (payTo: { base: Address | null; solana: Address | null }, price: AtomicAmount | null = PRICE) =>
  aCheckout(aListing({ repo: new RepoRef({ owner: "octo", name: "widget" }), price, payTo }))
const both = () => requirementsOf(checkoutFor({ base: BASE_PAY_TO, solana: SOLANA_PAY_TO }), true, RESOURCE, facts, facilitatorExtra)
const requirement = (chain: Chain): PaymentRequirement => both().find((r) => r.chain === chain)!

const termsOf = (r: PaymentRequirement) => ({ scheme: r.scheme as string, network: r.network, asset: r.asset, amount: r.amount.toString(), payTo: r.payTo })
const v2 = (accepted: ReturnType<typeof termsOf>): SubmittedPayment =>
  ({ x402Version: 2, scheme: accepted.scheme, network: accepted.network, accepted: Option.some(accepted), payload: {}, raw: {} })
const v1 = (network: string): SubmittedPayment =>
  ({ x402Version: 1, scheme: "exact", network, accepted: Option.none(), payload: {}, raw: {} })

describe("payment requirements of a checkout", () => {
  it("a checkout offers one exact USDC requirement per chain it has a payout address for, at its price", () => {
    const reqs = both()
    expect(reqs.map((r) => r.chain)).toEqual(["base", "solana"])
    for (const r of reqs) {
      expect(r).toMatchObject({
        scheme: "exact",
        livemode: true,
        network: facts(r.chain).network,
        v1Network: facts(r.chain).v1Network,
        asset: facts(r.chain).asset,
        amount: PRICE,
        maxTimeoutSeconds: 300,
        resource: RESOURCE
      })
    }
    expect(MAX_TIMEOUT_SECONDS).toBe(300)
  })

  it("each chain's money goes to that chain's payout address, never another chain's", () => {
    expect(requirement("base").payTo).toBe(BASE_PAY_TO)
    expect(requirement("solana").payTo).toBe(SOLANA_PAY_TO)
    const onlySolana = requirementsOf(checkoutFor({ base: null, solana: SOLANA_PAY_TO }), false, RESOURCE, facts, facilitatorExtra)
    expect(onlySolana.map((r) => [r.chain, r.payTo, r.livemode])).toEqual([["solana", SOLANA_PAY_TO, false]])
  })

  it("a checkout without a price or without a payout address offers nothing to pay", () => {
    expect(requirementsOf(checkoutFor({ base: BASE_PAY_TO, solana: null }, null), true, RESOURCE, facts, facilitatorExtra)).toEqual([])
    expect(requirementsOf(checkoutFor({ base: null, solana: null }), true, RESOURCE, facts, facilitatorExtra)).toEqual([])
  })

  it("a requirement describes what is sold and carries the chain's and the facilitator's scheme extras", () => {
    expect(requirement("base").description).toBe("octo/widget: the repository's default branch as a .tar.gz")
    expect(requirement("base").extra).toEqual({ name: "USD Coin", version: "2" })
    expect(requirement("solana").extra).toEqual({ feePayer: "FeePayer1111" })
  })
})

describe("which requirement a payment was made for", () => {
  it("a v2 payment that accepted exactly a requirement's terms matches that requirement, on either chain", () => {
    for (const chain of ["base", "solana"] as const) {
      expect(Option.getOrNull(matchRequirement(v2(termsOf(requirement(chain))), both()))?.chain).toBe(chain)
    }
  })

  it("a v2 payment for another amount, asset, address, network or scheme matches nothing", () => {
    const terms = termsOf(requirement("base"))
    const changed = [
      { ...terms, amount: "12340001" },
      { ...terms, asset: USDC_SOLANA },
      { ...terms, payTo: "0x0000000000000000000000000000000000000001" },
      { ...terms, network: "eip155:84532" },
      { ...terms, scheme: "upto" }
    ]
    for (const accepted of changed) expect(Option.isNone(matchRequirement(v2(accepted), both())), JSON.stringify(accepted)).toBe(true)
    // The accepted terms are checked even when the header's own scheme and network are right.
    const wrongAmount = { ...v2(terms), accepted: Option.some({ ...terms, amount: "1" }) }
    expect(Option.isNone(matchRequirement(wrongAmount, both()))).toBe(true)
    const wrongScheme = { ...v2(terms), accepted: Option.some({ ...terms, scheme: "upto" }) }
    expect(Option.isNone(matchRequirement(wrongScheme, both()))).toBe(true)
  })

  it("the terms a payment names match a sale's only on the same scheme, network, asset, amount and payTo (a reused payment id must name the same terms)", () => {
    const terms = termsOf(requirement("base"))
    const sale = { ...requirement("base"), amount: PRICE }
    expect(matchesTerms("base", terms, sale)).toBe(true)
    for (const changed of [
      { ...terms, scheme: "upto" },
      { ...terms, network: "eip155:84532" },
      { ...terms, asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" },
      { ...terms, amount: "12340001" },
      { ...terms, payTo: "0x0000000000000000000000000000000000000001" }
    ]) expect(matchesTerms("base", changed, sale), JSON.stringify(changed)).toBe(false)
  })

  it("Base addresses match whatever their case (hex addresses are case-insensitive)", () => {
    const terms = termsOf(requirement("base"))
    const shouted = { ...terms, payTo: terms.payTo.toUpperCase().replace("0X", "0x"), asset: terms.asset.toLowerCase() }
    expect(Option.getOrNull(matchRequirement(v2(shouted), both()))?.chain).toBe("base")
    expect(matchesTerms("base", shouted, { ...requirement("base"), amount: PRICE })).toBe(true)
  })

  it("Solana addresses match only exactly (base58 is case-sensitive: another case is another address)", () => {
    const terms = termsOf(requirement("solana"))
    expect(Option.isNone(matchRequirement(v2({ ...terms, payTo: terms.payTo.toLowerCase() }), both()))).toBe(true)
    expect(Option.isNone(matchRequirement(v2({ ...terms, asset: terms.asset.toUpperCase() }), both()))).toBe(true)
  })

  it("a v1 payment matches by scheme and network only, and never a requirement on another network", () => {
    expect(Option.getOrNull(matchRequirement(v1(requirement("solana").network), both()))?.chain).toBe("solana")
    expect(Option.getOrNull(matchRequirement(v1(requirement("base").network), both()))?.chain).toBe("base")
    expect(Option.isNone(matchRequirement(v1("eip155:84532"), both()))).toBe(true)
    expect(Option.isNone(matchRequirement({ ...v1(requirement("base").network), scheme: "upto" }, both()))).toBe(true)
  })

  it("a v2 payment that does not say what it accepted matches nothing", () => {
    const payment: SubmittedPayment = { ...v1(requirement("base").network), x402Version: 2 }
    expect(Option.isNone(matchRequirement(payment, both()))).toBe(true)
  })

  it("a payment for a checkout that now offers nothing (voided, unpriced) matches nothing", () => {
    expect(Option.isNone(matchRequirement(v2(termsOf(requirement("base"))), []))).toBe(true)
  })
})

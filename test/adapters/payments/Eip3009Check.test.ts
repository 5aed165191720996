/*
 * checkEip3009, the local check every Base purchase runs (and the only check on the payment-identifier retry):
 * terms, validity window, and the signature verdict it remembers. verifyEip3009Signature is wrapped (not
 * replaced) so the tests can see when a verdict is reused rather than reached again.
 */
import { beforeEach, describe, expect, it } from "@effect/vitest"
import type { Hex } from "viem"
import { vi } from "vitest"
import {
  checkEip3009,
  domainOf,
  eip3009TermsProblem,
  EvmReason,
  signatureValid,
  VALID_BEFORE_MARGIN_SECONDS
} from "../../../adapters/evm/Eip3009Check.js"
import * as EvmPayment from "../../../adapters/evm/EvmPayment.js"
import type { Eip3009Authorization, Eip3009Domain, Eip3009Payment } from "../../../adapters/evm/EvmPayment.js"
import {
  authorizationOf,
  domainFor,
  newAccount,
  newAddress,
  newNonce,
  NOW,
  PRICE,
  sign,
  termsFor,
  USDC_BASE_SEPOLIA,
  wirePayload
} from "./evmSupport.js"

vi.mock("../../../adapters/evm/EvmPayment.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../adapters/evm/EvmPayment.js")>()
  return { ...original, verifyEip3009Signature: vi.fn(original.verifyEip3009Signature) }
})
const verifications = vi.mocked(EvmPayment.verifyEip3009Signature)
beforeEach(() => verifications.mockClear())

/** The address with the case of one letter flipped: the same address under a checksum that no longer holds. */
const badChecksum = (address: string): string => {
  const i = address.slice(2).search(/[a-fA-F]/) + 2
  const c = address[i]!
  return `${address.slice(0, i)}${c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()}${address.slice(i + 1)}`
}

/** A buyer's signed payment for `terms`, with its authorization changed as `over` says before signing. */
const signedFor = async (terms = termsFor(newAddress()), over: Partial<Eip3009Authorization> = {}) => {
  const buyer = newAccount()
  const authorization = authorizationOf(buyer, terms, over)
  const payment: Eip3009Payment = { signature: await sign(buyer, authorization, domainFor(terms)), authorization }
  return { buyer, terms, payment, payload: wirePayload(payment) }
}

describe("checkEip3009 accepts the payment the terms ask for", () => {
  it("signed by from for exactly the amount to payTo, inside its window (or with no clock given)", async () => {
    const { payload, terms } = await signedFor()
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    expect(await checkEip3009(payload, terms, null)).toBeUndefined()
    // Terms spelling payTo and the asset in lower case, or with a wrong checksum, are the same terms.
    expect(await checkEip3009(payload, { ...terms, payTo: terms.payTo.toLowerCase(), asset: terms.asset.toLowerCase() }, NOW)).toBeUndefined()
    expect(await checkEip3009(payload, { ...terms, payTo: badChecksum(terms.payTo), asset: badChecksum(terms.asset) }, NOW)).toBeUndefined()
  })
})

describe("checkEip3009: a remembered verdict is never reused for another payment (memo poisoning)", () => {
  it("a signature valid for value V, checked once, is refused when presented with value V+1 for terms of V+1", async () => {
    const { payload, terms, buyer } = await signedFor()
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    const raised = { ...payload, authorization: { ...payload.authorization, value: (PRICE + 1n).toString() } }
    expect(await checkEip3009(raised, { ...terms, amount: PRICE + 1n }, NOW)).toEqual({ reason: EvmReason.signature, payer: buyer.address })
  })

  it("nor for another recipient, window, nonce, signer, signature, chain, token, name or version", async () => {
    const { payment, terms } = await signedFor()
    const domain = domainFor(terms)
    expect(await signatureValid(payment, domain)).toBe(true)
    const a = payment.authorization
    const others: ReadonlyArray<readonly [string, Eip3009Payment, Eip3009Domain]> = [
      ["value", { ...payment, authorization: { ...a, value: a.value + 1n } }, domain],
      ["to", { ...payment, authorization: { ...a, to: newAddress() } }, domain],
      ["validAfter", { ...payment, authorization: { ...a, validAfter: a.validAfter - 1n } }, domain],
      ["validBefore", { ...payment, authorization: { ...a, validBefore: a.validBefore + 1n } }, domain],
      ["nonce", { ...payment, authorization: { ...a, nonce: newNonce() } }, domain],
      ["from", { ...payment, authorization: { ...a, from: newAddress() } }, domain],
      ["signature", { ...payment, signature: `${payment.signature.slice(0, -2)}${payment.signature.endsWith("1b") ? "1c" : "1b"}` as Hex }, domain],
      ["chainId", payment, { ...domain, chainId: 8453 }],
      ["verifyingContract", payment, { ...domain, verifyingContract: newAddress() }],
      ["name", payment, { ...domain, name: "USD Coin" }],
      ["version", payment, { ...domain, version: "1" }]
    ]
    for (const [what, other, d] of others) expect(await signatureValid(other, d), what).toBe(false)
    // Each was verified, none answered from the memo.
    expect(verifications).toHaveBeenCalledTimes(1 + others.length)
  })

  it("an invalid verdict remembered for a forged signature does not refuse the buyer's real one", async () => {
    const { payment, terms, payload, buyer } = await signedFor()
    const forged = await sign(newAccount(), payment.authorization, domainFor(terms))
    expect(await checkEip3009({ ...payload, signature: forged }, terms, NOW)).toEqual({ reason: EvmReason.signature, payer: buyer.address })
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
  })
})

describe("checkEip3009 remembers verdicts, boundedly", () => {
  it("the same payment checked again is answered from the memo, with the same verdict", async () => {
    const { payload, terms } = await signedFor()
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    expect(verifications).toHaveBeenCalledTimes(1)
    const forged = { ...payload, signature: `0x${"ab".repeat(65)}` }
    expect(await checkEip3009(forged, terms, NOW)).toMatchObject({ reason: EvmReason.signature })
    expect(await checkEip3009(forged, terms, NOW)).toMatchObject({ reason: EvmReason.signature })
    expect(verifications).toHaveBeenCalledTimes(2)
  })

  it("holds 4096 verdicts and drops the oldest first", async () => {
    const { payment, terms } = await signedFor()
    const domain = domainFor(terms)
    // Whatever the memo held before, this run's 4096 verdicts replace it.
    const filler = (i: number): Eip3009Payment => ({
      signature: `0x${"ab".repeat(65)}`,
      authorization: { ...payment.authorization, nonce: `0x${i.toString(16).padStart(64, "0")}` }
    })
    for (let i = 0; i < 4096; i++) await signatureValid(filler(i), domain)
    expect(await signatureValid(payment, domain)).toBe(true) // evicts filler 0
    verifications.mockClear()
    // The newest 4096 (fillers 1..4095 and the payment) are all remembered.
    expect(await signatureValid(payment, domain)).toBe(true)
    expect(await signatureValid(filler(1), domain)).toBe(false)
    expect(await signatureValid(filler(4095), domain)).toBe(false)
    expect(verifications).toHaveBeenCalledTimes(0)
    // Filler 0 was dropped: it is verified again (and then evicts filler 1, the oldest).
    expect(await signatureValid(filler(0), domain)).toBe(false)
    expect(verifications).toHaveBeenCalledTimes(1)
    expect(await signatureValid(payment, domain)).toBe(true)
    expect(verifications).toHaveBeenCalledTimes(1)
    expect(await signatureValid(filler(1), domain)).toBe(false)
    expect(verifications).toHaveBeenCalledTimes(2)
  })
})

describe("checkEip3009 refuses payments for other terms", () => {
  it("another recipient, or terms whose payTo is no address", async () => {
    const { payload, terms, buyer } = await signedFor()
    expect(await checkEip3009(payload, { ...terms, payTo: newAddress() }, NOW)).toEqual({ reason: EvmReason.recipientMismatch, payer: buyer.address })
    expect(await checkEip3009(payload, { ...terms, payTo: "not-an-address" }, NOW)).toEqual({ reason: EvmReason.recipientMismatch, payer: buyer.address })
  })

  it("one atomic unit less or more than the amount, even when signed", async () => {
    for (const value of [PRICE - 1n, PRICE + 1n]) {
      const { payload, terms, buyer } = await signedFor(undefined, { value })
      expect(await checkEip3009(payload, terms, NOW), String(value)).toEqual({ reason: EvmReason.valueMismatch, payer: buyer.address })
    }
  })

  it("terms without a token domain (name, version, an eip155 network, a token address) cannot check a signature", async () => {
    const { payload, terms, buyer } = await signedFor()
    const broken = [
      { ...terms, extra: { version: "2" } },
      { ...terms, extra: { name: "USDC" } },
      { ...terms, extra: { name: "", version: "2" } },
      { ...terms, extra: { name: "USDC", version: "" } },
      { ...terms, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" },
      { ...terms, network: "eip155:0" },
      { ...terms, asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" }
    ]
    for (const t of broken) expect(await checkEip3009(payload, t, NOW), `${t.network} ${t.asset} ${JSON.stringify(t.extra)}`).toEqual({ reason: EvmReason.missingDomain, payer: buyer.address })
  })

  it("a malformed payload is refused with the parser's reason and no payer", async () => {
    const { payload, terms } = await signedFor()
    expect(await checkEip3009({ ...payload, authorization: { ...payload.authorization, value: "-1" } }, terms, NOW))
      .toEqual({ reason: "invalid_exact_evm_authorization_value", payer: null })
    expect(await checkEip3009({ authorization: payload.authorization }, terms, NOW)).toEqual({ reason: "invalid_payload", payer: null })
  })

  it("a valid signature for another chain id or another token contract is refused as a signature", async () => {
    const { payload, terms, buyer } = await signedFor()
    // The same USDC address on Base mainnet is another domain: the buyer signed for Sepolia.
    expect(await checkEip3009(payload, { ...terms, network: "eip155:8453" }, NOW)).toEqual({ reason: EvmReason.signature, payer: buyer.address })
    expect(await checkEip3009(payload, { ...terms, asset: newAddress() }, NOW)).toEqual({ reason: EvmReason.signature, payer: buyer.address })
  })
})

describe("checkEip3009: the validity window at `at` (nowSeconds)", () => {
  it("validBefore must leave the settlement margin: now + 6 s holds, now + 5 s does not", async () => {
    expect(VALID_BEFORE_MARGIN_SECONDS).toBe(6n)
    const { payload, terms, buyer } = await signedFor(undefined, { validBefore: NOW + 6n })
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    expect(await checkEip3009(payload, terms, NOW + 1n)).toEqual({ reason: EvmReason.validBefore, payer: buyer.address })
    // Long expired, it is still signed: without a clock the window is not the check's.
    expect(await checkEip3009(payload, terms, NOW + 1_000_000n)).toEqual({ reason: EvmReason.validBefore, payer: buyer.address })
    expect(await checkEip3009(payload, terms, null)).toBeUndefined()
  })

  it("validAfter may be now, not one second later", async () => {
    const { payload, terms, buyer } = await signedFor(undefined, { validAfter: NOW })
    expect(await checkEip3009(payload, terms, NOW)).toBeUndefined()
    expect(await checkEip3009(payload, terms, NOW - 1n)).toEqual({ reason: EvmReason.validAfter, payer: buyer.address })
    expect(await checkEip3009(payload, terms, null)).toBeUndefined()
  })

  it("validBefore is checked before validAfter", async () => {
    const { payment, terms } = await signedFor(undefined, { validAfter: NOW + 100n, validBefore: NOW + 1n })
    expect(eip3009TermsProblem(payment, terms, NOW)).toBe(EvmReason.validBefore)
  })
})

describe("domainOf", () => {
  it("is the terms' name, version, chain id and checksummed token address", () => {
    expect(domainOf(termsFor(newAddress(), { asset: USDC_BASE_SEPOLIA.toLowerCase() }))).toEqual({
      name: "USDC",
      version: "2",
      chainId: 84532,
      verifyingContract: USDC_BASE_SEPOLIA
    })
  })
})

describe("eip3009TermsProblem", () => {
  it("the first broken rule: recipient, then value, then window; none when all hold", async () => {
    const { payment, terms } = await signedFor()
    expect(eip3009TermsProblem(payment, terms, NOW)).toBeUndefined()
    expect(eip3009TermsProblem(payment, { ...terms, payTo: newAddress(), amount: 1n }, NOW)).toBe(EvmReason.recipientMismatch)
    expect(eip3009TermsProblem(payment, { ...terms, amount: 1n }, NOW + 1_000_000n)).toBe(EvmReason.valueMismatch)
  })
})

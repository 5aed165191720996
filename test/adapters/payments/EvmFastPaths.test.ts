/*
 * The two shortcuts of the EIP-3009 signature check, whose verdicts must stay viem's: the digest of an
 * authorization already in canonical form is computed directly (two keccaks, not viem's generic encoder),
 * anything else goes through viem's hashTypedData; and each token domain's EIP-712 separator is remembered
 * (at most 64). viem's hashTypedData and domainSeparator are wrapped, not replaced, to count their calls;
 * digests and verdicts are checked too, so a shortcut that changed a verdict would show.
 */
import { describe, expect, it } from "@effect/vitest"
import * as viem from "viem"
import { vi } from "vitest"
import {
  type Eip3009Authorization,
  type Eip3009Domain,
  eip3009Digest,
  transferWithAuthorizationTypes,
  verifyEip3009Signature
} from "../../../adapters/evm/EvmPayment.js"
import { authorizationOf, domainFor, MAX_UINT256, newAccount, newAddress, sign, termsFor } from "./evmSupport.js"

vi.mock("viem", async (importOriginal) => {
  const original = await importOriginal<typeof import("viem")>()
  return { ...original, domainSeparator: vi.fn(original.domainSeparator), hashTypedData: vi.fn(original.hashTypedData) }
})
const computed = vi.mocked(viem.domainSeparator)
const generic = vi.mocked(viem.hashTypedData)

/** A domain no other test uses (its own token address), and a payment signed under it. */
const fresh = async () => {
  const domain: Eip3009Domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: newAddress() }
  const buyer = newAccount()
  const authorization = authorizationOf(buyer, termsFor(newAddress()))
  return { domain, payment: { signature: await sign(buyer, authorization, domain), authorization } }
}

const countFor = (domain: Eip3009Domain) =>
  computed.mock.calls.filter(([arg]) => arg.domain?.verifyingContract === domain.verifyingContract).length

describe("the domain separators verifyEip3009Signature keeps", () => {
  it("a domain's separator is computed once, and each domain's verdicts stay its own", async () => {
    const a = await fresh()
    const b = await fresh()
    expect(await verifyEip3009Signature(a.payment, a.domain)).toBe(true)
    expect(await verifyEip3009Signature(b.payment, b.domain)).toBe(true)
    expect(await verifyEip3009Signature(a.payment, a.domain)).toBe(true)
    expect(await verifyEip3009Signature(a.payment, b.domain)).toBe(false)
    expect(await verifyEip3009Signature(b.payment, a.domain)).toBe(false)
    expect([countFor(a.domain), countFor(b.domain)]).toEqual([1, 1])
  })

  it("at most 64 are kept: the 65th domain starts the memory afresh", async () => {
    const first = await fresh()
    const check = () => verifyEip3009Signature(first.payment, first.domain)
    const another = () => verifyEip3009Signature(first.payment, { name: "USDC", version: "2", chainId: 1, verifyingContract: newAddress() })
    expect(await check()).toBe(true)
    // Whatever was kept before: add domains until the memory is cleared (the first domain computed again).
    let added = 0
    while (countFor(first.domain) === 1 && added < 200) {
      await another()
      added++
      expect(await check()).toBe(true)
    }
    expect(added).toBeLessThanOrEqual(64)
    expect(countFor(first.domain)).toBe(2)
    // Now exactly two are kept (the last added and the first): 62 more make 64, all kept.
    for (let i = 0; i < 62; i++) await another()
    expect(await check()).toBe(true)
    expect(countFor(first.domain)).toBe(2)
    // The 65th clears them.
    await another()
    expect(await check()).toBe(true)
    expect(countFor(first.domain)).toBe(3)
  })
})

describe("eip3009Digest: the fast path is for canonical authorizations only", () => {
  const domain = domainFor(termsFor(newAddress()))
  const a = authorizationOf(newAccount(), termsFor(newAddress()))
  /** Our digest (or the error it throws), and whether viem's hashTypedData computed it. */
  const ours = (d: Eip3009Domain, m: Eip3009Authorization) => {
    generic.mockClear()
    let digest: string
    try {
      digest = eip3009Digest(d, m)
    } catch (e) {
      digest = `throws ${(e as Error).name}`
    }
    return { digest, generic: generic.mock.calls.length }
  }
  const viemDigest = (d: Eip3009Domain, m: Eip3009Authorization) => {
    try {
      return viem.hashTypedData({ domain: d, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message: m })
    } catch (e) {
      return `throws ${(e as Error).name}`
    }
  }

  it("checksummed or lower-case addresses, uint256s from 0 to 2^256-1, a 32-byte nonce, a string name and version, a chain id from 0: fast, and viem's digest", () => {
    const cases: ReadonlyArray<readonly [string, Eip3009Domain, Eip3009Authorization]> = [
      ["as signed", domain, a],
      ["zeros", domain, { ...a, value: 0n, validAfter: 0n, validBefore: 0n }],
      ["maxima", domain, { ...a, value: MAX_UINT256, validAfter: MAX_UINT256, validBefore: MAX_UINT256 }],
      ["lower-case addresses", domain, { ...a, from: a.from.toLowerCase() as viem.Hex, to: a.to.toLowerCase() as viem.Hex }],
      ["upper-case nonce digits", domain, { ...a, nonce: `0x${a.nonce.slice(2).toUpperCase()}` as viem.Hex }],
      ["chain id 0", { ...domain, chainId: 0 }, a],
      ["largest safe chain id", { ...domain, chainId: Number.MAX_SAFE_INTEGER }, a],
      ["empty name and version", { ...domain, name: "", version: "" }, a]
    ]
    for (const [what, d, m] of cases) expect(ours(d, m), what).toEqual({ digest: viemDigest(d, m), generic: 0 })
  })

  it("anything else goes through viem's hashTypedData, which gives the digest or the refusal", () => {
    const flip = (x: string): viem.Hex => {
      const i = x.slice(2).search(/[a-fA-F]/) + 2
      const c = x[i]!
      return `${x.slice(0, i)}${c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()}${x.slice(i + 1)}` as viem.Hex
    }
    const cases: ReadonlyArray<readonly [string, Eip3009Domain, Eip3009Authorization]> = [
      ["from with a wrong checksum", domain, { ...a, from: flip(a.from) }],
      ["to with a wrong checksum", domain, { ...a, to: flip(a.to) }],
      ["value -1", domain, { ...a, value: -1n }],
      ["value 2^256", domain, { ...a, value: MAX_UINT256 + 1n }],
      ["value a number", domain, { ...a, value: 10_000 as unknown as bigint }],
      ["validAfter -1", domain, { ...a, validAfter: -1n }],
      ["validBefore 2^256", domain, { ...a, validBefore: MAX_UINT256 + 1n }],
      ["nonce of 31 bytes", domain, { ...a, nonce: a.nonce.slice(0, 64) as viem.Hex }],
      ["nonce in an array", domain, { ...a, nonce: [a.nonce] as unknown as viem.Hex }],
      ["name a number", { ...domain, name: 5 as unknown as string }, a],
      ["version a number", { ...domain, version: 2 as unknown as string }, a],
      ["chain id -1", { ...domain, chainId: -1 }, a],
      ["chain id 1.5", { ...domain, chainId: 1.5 }, a],
      ["chain id past 2^53", { ...domain, chainId: 2 ** 53 }, a],
      ["verifyingContract with a wrong checksum", { ...domain, verifyingContract: flip(domain.verifyingContract) }, a]
    ]
    for (const [what, d, m] of cases) expect(ours(d, m), what).toEqual({ digest: viemDigest(d, m), generic: 1 })
  })
})

/*
 * verifyEip3009Signature remembers each token domain's EIP-712 separator (a process sees a handful of
 * domains) and keeps at most 64. viem's domainSeparator is wrapped, not replaced, to count when one is
 * computed; verdicts are checked too, so a wrong separator reused for another domain would show.
 */
import { describe, expect, it } from "@effect/vitest"
import * as viem from "viem"
import { vi } from "vitest"
import { type Eip3009Domain, verifyEip3009Signature } from "../../../adapters/evm/EvmPayment.js"
import { authorizationOf, newAccount, newAddress, sign, termsFor } from "./evmSupport.js"

vi.mock("viem", async (importOriginal) => {
  const original = await importOriginal<typeof import("viem")>()
  return { ...original, domainSeparator: vi.fn(original.domainSeparator) }
})
const computed = vi.mocked(viem.domainSeparator)

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

import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { baseFacts, normalizeBaseAddress } from "../../adapters/evm/BaseAddress.js"

const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

describe("normalizeBaseAddress", () => {
  it("accepts a checksummed address unchanged", () => {
    expect(normalizeBaseAddress(USDC)).toEqual(Either.right(USDC))
  })

  it("accepts an all-lowercase address and returns it checksummed", () => {
    expect(normalizeBaseAddress(USDC.toLowerCase())).toEqual(Either.right(USDC))
  })

  it("accepts an all-uppercase-hex address and returns it checksummed", () => {
    expect(normalizeBaseAddress(`0x${USDC.slice(2).toUpperCase()}`)).toEqual(Either.right(USDC))
  })

  it("rejects a mixed-case address whose checksum is wrong", () => {
    // Flip the case of the first letter of the checksummed address (`f` at index 8).
    const flipped = `${USDC.slice(0, 8)}F${USDC.slice(9)}`
    expect(flipped).not.toBe(USDC)
    expect(flipped.toLowerCase()).toBe(USDC.toLowerCase())
    const result = normalizeBaseAddress(flipped)
    expect(result).toEqual(Either.left("must be an EVM address with a valid EIP-55 checksum"))
  })

  it("rejects 0x + 39 hex characters", () => {
    expect(Either.isLeft(normalizeBaseAddress(USDC.slice(0, 41)))).toBe(true)
  })

  it("rejects 0x + 41 hex characters", () => {
    expect(Either.isLeft(normalizeBaseAddress(`${USDC}0`))).toBe(true)
  })

  it("rejects non-hex characters, a missing prefix and surrounding whitespace", () => {
    for (const raw of [`0x${"g".repeat(40)}`, USDC.slice(2), `0X${USDC.slice(2)}`, ` ${USDC}`, `${USDC}\n`, ""]) {
      expect(normalizeBaseAddress(raw), raw).toEqual(
        Either.left("must be an EVM address (0x followed by 40 hexadecimal characters)")
      )
    }
  })
})

describe("baseFacts", () => {
  it("gives Base mainnet USDC in live mode", () => {
    expect(baseFacts(true)).toEqual({
      chain: "base",
      livemode: true,
      network: "eip155:8453",
      v1Network: "base",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      extra: { name: "USD Coin", version: "2" }
    })
  })

  it("gives Base Sepolia USDC in test mode", () => {
    expect(baseFacts(false)).toEqual({
      chain: "base",
      livemode: false,
      network: "eip155:84532",
      v1Network: "base-sepolia",
      asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      extra: { name: "USDC", version: "2" }
    })
  })

  it("publishes assets that pass its own address check", () => {
    for (const livemode of [true, false]) {
      const asset = baseFacts(livemode).asset
      expect(normalizeBaseAddress(asset)).toEqual(Either.right(asset))
    }
  })
})

import { describe, expect, it } from "@effect/vitest"
import { getBase58Decoder, getBase58Encoder } from "@solana/kit"
import { Either } from "effect"
import { normalizeSolanaAddress, solanaFacts } from "../../adapters/solana/SolanaAddress.js"

const MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
const INVALID = Either.left("must be a Solana address (base58 of exactly 32 bytes)")

const base58Of = (bytes: Uint8Array) => getBase58Decoder().decode(bytes)
const byteLength = (text: string) => getBase58Encoder().encode(text).length

describe("normalizeSolanaAddress", () => {
  it("accepts a real 32-byte address unchanged", () => {
    expect(byteLength(MINT)).toBe(32)
    expect(normalizeSolanaAddress(MINT)).toEqual(Either.right(MINT))
  })

  it("accepts the all-zero address (32 leading '1's)", () => {
    const zero = base58Of(new Uint8Array(32))
    expect(zero).toBe("1".repeat(32))
    expect(normalizeSolanaAddress(zero)).toEqual(Either.right(zero))
  })

  it("rejects base58 that decodes to 31 bytes", () => {
    const short = base58Of(new Uint8Array(31).fill(255))
    // Long enough to pass a length-only check, so the byte count is what rejects it.
    expect(short.length).toBeGreaterThanOrEqual(32)
    expect(byteLength(short)).toBe(31)
    expect(normalizeSolanaAddress(short)).toEqual(INVALID)
  })

  it("rejects base58 that decodes to 33 bytes", () => {
    const bytes = new Uint8Array(33)
    bytes[32] = 1
    const long = base58Of(bytes)
    expect(long.length).toBeLessThanOrEqual(44)
    expect(byteLength(long)).toBe(33)
    expect(normalizeSolanaAddress(long)).toEqual(INVALID)
  })

  it("rejects characters outside the base58 alphabet (0, O, I, l)", () => {
    for (const letter of ["0", "O", "I", "l"]) {
      const raw = `${letter}${MINT.slice(1)}`
      expect(normalizeSolanaAddress(raw), raw).toEqual(INVALID)
    }
  })

  it("rejects the empty string and surrounding whitespace", () => {
    for (const raw of ["", ` ${MINT}`, `${MINT} `, `${MINT}\n`]) {
      expect(normalizeSolanaAddress(raw), JSON.stringify(raw)).toEqual(INVALID)
    }
  })

  it("rejects an EVM address", () => {
    expect(normalizeSolanaAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")).toEqual(INVALID)
  })
})

describe("solanaFacts", () => {
  it("gives Solana mainnet USDC in live mode", () => {
    expect(solanaFacts(true)).toEqual({
      chain: "solana",
      livemode: true,
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      v1Network: "solana",
      asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      extra: {}
    })
  })

  it("gives Solana devnet USDC in test mode", () => {
    expect(solanaFacts(false)).toEqual({
      chain: "solana",
      livemode: false,
      network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
      v1Network: "solana-devnet",
      asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
      extra: {}
    })
  })

  it("publishes mints that pass its own address check", () => {
    for (const livemode of [true, false]) {
      const asset = solanaFacts(livemode).asset
      expect(normalizeSolanaAddress(asset)).toEqual(Either.right(asset))
    }
  })
})

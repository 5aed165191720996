import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { createHmac, timingSafeEqual } from "node:crypto"
import { mintSiwxNonce, openSiwxNonce, SIWX_CHALLENGE_TTL_MS } from "../../domain/rules/SiwxNonce.js"

// A real MAC, as the SecretBox port provides one (HMAC-SHA256, hex): a forged or altered tag must not verify.
const KEY = "siwx-test-key"
const mac = (message: string) => createHmac("sha256", KEY).update(message).digest("hex")
const verify = (message: string, tag: string) => {
  const expected = Buffer.from(mac(message))
  const given = Buffer.from(tag)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
const acceptAnyTag = () => true

const URI = "https://market.test/checkout/chk_1"
const RANDOM = Uint8Array.from([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef])
// 2023-11-14T22:13:20Z = 1_700_000_000 s = 0x6553f100.
const ISSUED = new Date(1_700_000_000_000)
const TAG = "a".repeat(64)

describe("Sign-In-With-X challenge nonces", () => {
  it("a challenge may be signed and redeemed for exactly 5 minutes", () => {
    expect(SIWX_CHALLENGE_TTL_MS).toBe(300_000)
  })

  it("a nonce is 16 hex of randomness, the issue time in unix seconds as 8 hex, and a 64-hex MAC", () => {
    const nonce = mintSiwxNonce(RANDOM, ISSUED, URI, mac)
    expect(nonce).toHaveLength(88)
    expect(nonce.slice(0, 16)).toBe("0123456789abcdef")
    expect(nonce.slice(16, 24)).toBe("6553f100")
    expect(nonce).toMatch(/^[0-9a-f]{88}$/) // SIWE allows alphanumerics only
  })

  it("the MAC covers the randomness, the issue time and the checkout URL the nonce was issued for", () => {
    const seen: Array<string> = []
    const nonce = mintSiwxNonce(RANDOM, ISSUED, URI, (m) => (seen.push(m), TAG))
    expect(seen).toEqual([`siwx-nonce:0123456789abcdef:6553f100:${URI}`])
    expect(nonce).toBe(`0123456789abcdef6553f100${TAG}`)
  })

  it("every random byte is written as two hex digits, leading zero kept", () => {
    const nonce = mintSiwxNonce(Uint8Array.from([0, 1, 2, 0x0a, 0x0f, 0x10, 0xf0, 0xff]), ISSUED, URI, () => TAG)
    expect(nonce.slice(0, 16)).toBe("0001020a0f10f0ff")
  })

  it("only the first 8 random bytes are used; fewer are padded with zeros on the right", () => {
    const more = mintSiwxNonce(Uint8Array.from([...RANDOM, 0xee, 0xdd]), ISSUED, URI, () => TAG)
    expect(more).toBe(`0123456789abcdef6553f100${TAG}`)
    const fewer = mintSiwxNonce(Uint8Array.from([0xab]), ISSUED, URI, () => TAG)
    expect(fewer).toBe(`ab000000000000006553f100${TAG}`)
    const none = mintSiwxNonce(new Uint8Array(0), ISSUED, URI, () => TAG)
    expect(none.slice(0, 16)).toBe("0".repeat(16))
  })

  it("the issue time is in whole seconds (rounded down) and padded to 8 hex digits", () => {
    expect(mintSiwxNonce(RANDOM, new Date(1_700_000_000_999), URI, () => TAG).slice(16, 24)).toBe("6553f100")
    expect(mintSiwxNonce(RANDOM, new Date(1_000), URI, () => TAG).slice(16, 24)).toBe("00000001")
    expect(mintSiwxNonce(RANDOM, new Date(0), URI, () => TAG).slice(16, 24)).toBe("00000000")
  })

  it("a nonce minted for a checkout opens for it, giving its issue time and the end of its 5 minutes", () => {
    const opened = openSiwxNonce(mintSiwxNonce(RANDOM, ISSUED, URI, mac), URI, verify)
    expect(opened).toEqual({ issuedAt: ISSUED, expiresAt: new Date(ISSUED.getTime() + 300_000) })
  })

  it("opening reads the issue time back in whole seconds", () => {
    const opened = openSiwxNonce(mintSiwxNonce(RANDOM, new Date(1_700_000_000_750), URI, mac), URI, verify)
    expect(opened?.issuedAt).toEqual(new Date(1_700_000_000_000))
    expect(opened?.expiresAt).toEqual(new Date(1_700_000_300_000))
  })

  it("the verifier is asked about the message the nonce's parts make with this checkout's URL, and the nonce's MAC", () => {
    const seen: Array<[string, string]> = []
    const nonce = `0123456789abcdef6553f100${"b".repeat(64)}`
    expect(openSiwxNonce(nonce, URI, (m, t) => (seen.push([m, t]), true))).toEqual({
      issuedAt: ISSUED,
      expiresAt: new Date(ISSUED.getTime() + SIWX_CHALLENGE_TTL_MS)
    })
    expect(seen).toEqual([[`siwx-nonce:0123456789abcdef:6553f100:${URI}`, "b".repeat(64)]])
  })

  it("a nonce issued for another checkout, or with any part altered, does not open", () => {
    const nonce = mintSiwxNonce(RANDOM, ISSUED, URI, mac)
    expect(openSiwxNonce(nonce, "https://market.test/checkout/chk_2", verify)).toBeNull()
    const flip = (i: number) => nonce.slice(0, i) + (nonce[i] === "0" ? "1" : "0") + nonce.slice(i + 1)
    expect(openSiwxNonce(flip(0), URI, verify)).toBeNull() // randomness
    expect(openSiwxNonce(flip(20), URI, verify)).toBeNull() // issue time (a later one would extend the window)
    expect(openSiwxNonce(flip(87), URI, verify)).toBeNull() // MAC
  })

  it("a nonce whose MAC the verifier refuses does not open", () => {
    expect(openSiwxNonce(`0123456789abcdef6553f100${TAG}`, URI, () => false)).toBeNull()
  })

  it.each([
    ["empty", ""],
    ["one hex digit short", `0123456789abcdef6553f100${"a".repeat(63)}`],
    ["one hex digit long", `0123456789abcdef6553f100${"a".repeat(65)}`],
    ["upper-case hex", `0123456789ABCDEF6553F100${"A".repeat(64)}`],
    ["a non-hex character", `0123456789abcdeg6553f100${TAG}`],
    ["something before it", `x0123456789abcdef6553f100${TAG}`],
    ["something after it", `0123456789abcdef6553f100${TAG}x`],
    ["a line break after it", `0123456789abcdef6553f100${TAG}\n`]
  ])("a nonce that is not of our shape (%s) is refused before any MAC is checked", (_, nonce) => {
    let asked = false
    expect(openSiwxNonce(nonce, URI, () => (asked = true))).toBeNull()
    expect(asked).toBe(false)
  })

  it("any nonce minted for a URL opens for that URL only, at its whole-second issue time", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 8, maxLength: 8 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 999 }),
        fc.webUrl(),
        fc.webUrl(),
        (random, seconds, ms, uri, other) => {
          const nonce = mintSiwxNonce(random, new Date(seconds * 1000 + ms), uri, mac)
          expect(nonce).toMatch(/^[0-9a-f]{88}$/)
          expect(openSiwxNonce(nonce, uri, verify)).toEqual({
            issuedAt: new Date(seconds * 1000),
            expiresAt: new Date(seconds * 1000 + SIWX_CHALLENGE_TTL_MS)
          })
          if (other !== uri) expect(openSiwxNonce(nonce, other, verify)).toBeNull()
        }
      )
    )
  })

  it("a nonce opened with a verifier that accepts any tag still yields its own issue time", () => {
    expect(openSiwxNonce(`ffffffffffffffff00000001${TAG}`, URI, acceptAnyTag)).toEqual({
      issuedAt: new Date(1_000),
      expiresAt: new Date(1_000 + SIWX_CHALLENGE_TTL_MS)
    })
  })
})

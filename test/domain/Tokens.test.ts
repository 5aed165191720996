import { describe, expect, it } from "@effect/vitest"
import { Effect, Encoding, Layer, Redacted, TestClock } from "effect"
import { BASE62, isWellFormedApiKey } from "../../domain/rules/ApiKeyFormat.js"
import { now } from "../../domain/rules/Clock.js"
import { newApiKey, newId, newSecret } from "../../domain/usecases/Minting.js"
import { SecretBox } from "../../ports/SecretBox.js"

/**
 * A SecretBox whose randomness is a script chosen by the test (cycled), recording how many bytes each draw asked
 * for; only randomBytes is used by minting.
 */
const scripted = (bytes: ReadonlyArray<number>) => {
  let i = 0
  const draws: Array<number> = []
  const unused = () => { throw new Error("not used") }
  const layer = Layer.succeed(SecretBox, {
    randomBytes: (n: number) => (draws.push(n), Uint8Array.from({ length: n }, () => bytes[i++ % bytes.length]!)),
    seal: unused,
    open: unused,
    digest: unused,
    mac: unused,
    verifyMac: unused
  } as never)
  return { layer, draws }
}

const COUNTING = Array.from({ length: 62 }, (_, b) => b) // byte b is BASE62[b]

describe("identifiers and bearer secrets", () => {
  it.effect("an id is its readable prefix and 22 base62 characters from the CSPRNG", () => {
    const { draws, layer } = scripted(COUNTING)
    return Effect.gen(function*() {
      const id = yield* newId<string>("lst_")
      expect(id).toBe(`lst_${BASE62.slice(0, 22)}`)
      expect(draws.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an id usually costs one draw: it asks for twice the characters it needs, headroom for skipped bytes", () => {
    const { draws, layer } = scripted(COUNTING)
    return Effect.gen(function*() {
      yield* newId<string>("acct_")
      expect(draws).toEqual([44])
    }).pipe(Effect.provide(layer))
  })

  it.effect("bytes the unbiased sampler skips cost more draws, but the id still has exactly 22 characters", () => {
    // 3 of every 4 bytes are >= 248 and skipped: 44 bytes give 11 characters, so a second draw asks for the other 11.
    const { draws, layer } = scripted([255, 250, 248, 7])
    return Effect.gen(function*() {
      const id = yield* newId<string>("sale_")
      expect(id).toBe(`sale_${"7".repeat(22)}`)
      expect(draws).toEqual([44, 44])
    }).pipe(Effect.provide(layer))
  })

  it.effect("when a draw falls short, the next draw is read only for the characters still missing", () => {
    // The first draw gives 11 characters ("7"); the second is all good bytes, of which only 11 are used.
    const script = [...Array.from({ length: 44 }, (_, i) => (i % 4 === 3 ? 7 : 255)), ...Array.from({ length: 44 }, () => 9)]
    const { layer } = scripted(script)
    return Effect.gen(function*() {
      expect(yield* newId<string>("")).toBe(`${"7".repeat(11)}${"9".repeat(11)}`)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a secret is 32 random bytes as base64url, with no prefix unless one is asked for", () => {
    const { draws, layer } = scripted([0xfb, 0xff, 0x01])
    return Effect.gen(function*() {
      const expected = Encoding.encodeBase64Url(Uint8Array.from({ length: 32 }, (_, i) => [0xfb, 0xff, 0x01][i % 3]!))
      const secret = yield* newSecret()
      expect(Redacted.isRedacted(secret)).toBe(true)
      expect(Redacted.value(secret)).toBe(expected)
      expect(Redacted.value(secret)).toHaveLength(43)
      expect(draws).toEqual([32])
      const prefixed = yield* newSecret("whsec_")
      expect(Redacted.value(prefixed)).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    }).pipe(Effect.provide(layer))
  })

  it.effect("secrets are never printed: logging or stringifying one shows no bytes", () => {
    const { layer } = scripted(COUNTING)
    return Effect.gen(function*() {
      const secret = yield* newSecret("ses_")
      expect(String(secret)).not.toContain("ses_")
      expect(JSON.stringify({ secret })).not.toContain("ses_")
    }).pipe(Effect.provide(layer))
  })

  it.effect("an API key is rmkt_, 30 random base62 characters from the CSPRNG and their checksum, and is redacted", () => {
    const { draws, layer } = scripted(COUNTING)
    return Effect.gen(function*() {
      const key = yield* newApiKey
      expect(Redacted.isRedacted(key)).toBe(true)
      const raw = Redacted.value(key)
      expect(raw.slice(0, 35)).toBe(`rmkt_${BASE62.slice(0, 30)}`)
      expect(raw).toHaveLength(41)
      expect(isWellFormedApiKey(raw)).toBe(true)
      expect(draws).toEqual([60])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the current time comes from Effect's Clock, so tests control it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_123)
      expect(yield* now).toEqual(new Date(1_700_000_000_123))
    }))
})

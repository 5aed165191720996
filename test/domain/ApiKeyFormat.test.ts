import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import fc from "fast-check"
import { SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import {
  API_KEY_PREFIX,
  apiKeyLast4,
  BASE62,
  base62FromBytes,
  crc32,
  formatApiKey,
  isWellFormedApiKey,
  toBase62
} from "../../domain/rules/ApiKeyFormat.js"
import { newApiKey } from "../../domain/usecases/Minting.js"
import { SecretBox } from "../../ports/SecretBox.js"

const base62Char = fc.constantFrom(...BASE62)
const random30 = fc.string({ unit: base62Char, minLength: 30, maxLength: 30 })

/** A SecretBox whose randomness is chosen by the test; only randomBytes is used by key minting. */
const scriptedRandomness = (bytes: ReadonlyArray<number>) => {
  let i = 0
  const unused = () => Effect.die("not used")
  return Layer.succeed(SecretBox, {
    randomBytes: (n: number) => Uint8Array.from({ length: n }, () => bytes[i++ % bytes.length]!),
    seal: unused,
    open: unused,
    digest: () => { throw new Error("not used") },
    mac: () => { throw new Error("not used") },
    verifyMac: () => { throw new Error("not used") }
  } as never)
}

describe("API key format", () => {
  it("crc32 is the IEEE CRC-32 (check value of \"123456789\" is 0xCBF43926)", () => {
    expect(crc32("123456789")).toBe(0xcbf43926)
    expect(crc32("")).toBe(0)
    expect(crc32("a")).toBe(0xe8b7be43)
  })

  it("keys from the real generator are rmkt_ + 36 base62 characters and pass the check", () =>
    Effect.gen(function*() {
      const seen = new Set<string>()
      for (let n = 0; n < 200; n++) {
        const key = Redacted.value(yield* newApiKey)
        expect(key).toMatch(/^rmkt_[0-9A-Za-z]{36}$/)
        expect(isWellFormedApiKey(key)).toBe(true)
        seen.add(key)
      }
      expect(seen.size).toBe(200)
    }).pipe(Effect.provide(SecretBoxTest), Effect.runPromise))

  it("keys minted from any randomness (including bytes the sampler must skip) pass the check", () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 80 }).filter((b) => b.some((x) => x < 248)), (bytes) => {
      const key = Redacted.value(Effect.runSync(Effect.provide(newApiKey, scriptedRandomness(bytes))))
      expect(key.startsWith(API_KEY_PREFIX)).toBe(true)
      expect(key).toHaveLength(API_KEY_PREFIX.length + 36)
      expect(isWellFormedApiKey(key)).toBe(true)
    }))
  })

  it("any single-character change makes the key fail", () => {
    fc.assert(
      fc.property(random30, fc.nat(), fc.oneof(base62Char, fc.string({ unit: "binary", minLength: 1, maxLength: 1 })), (random, at, replacement) => {
        const key = formatApiKey(random)
        const index = at % key.length
        fc.pre(key[index] !== replacement)
        const changed = key.slice(0, index) + replacement + key.slice(index + 1)
        expect(isWellFormedApiKey(changed), `${key} -> ${changed}`).toBe(false)
      }),
      { numRuns: 2_000 }
    )
  })

  it("every single-character substitution inside the random part and the checksum fails (exhaustive for one key)", () => {
    const key = formatApiKey("0123456789ABCDEFGHIJabcdefghij")
    expect(isWellFormedApiKey(key)).toBe(true)
    for (let i = API_KEY_PREFIX.length; i < key.length; i++) {
      for (const c of BASE62) {
        if (c === key[i]) continue
        expect(isWellFormedApiKey(key.slice(0, i) + c + key.slice(i + 1))).toBe(false)
      }
    }
  })

  it("an inserted, deleted or case-changed character fails too", () => {
    fc.assert(fc.property(random30, fc.nat(), base62Char, (random, at, extra) => {
      const key = formatApiKey(random)
      const i = at % key.length
      expect(isWellFormedApiKey(key.slice(0, i) + key.slice(i + 1))).toBe(false)
      expect(isWellFormedApiKey(key.slice(0, i) + extra + key.slice(i))).toBe(false)
      expect(isWellFormedApiKey(key.toUpperCase())).toBe(false)
      expect(isWellFormedApiKey(` ${key}`)).toBe(false)
      expect(isWellFormedApiKey(`${key}\n`)).toBe(false)
    }))
  })

  it("a key-shaped string passes exactly when its last 6 characters are the checksum of the 30 before", () => {
    fc.assert(fc.property(fc.string({ unit: base62Char, minLength: 36, maxLength: 36 }), (body) => {
      const candidate = API_KEY_PREFIX + body
      expect(isWellFormedApiKey(candidate)).toBe(formatApiKey(body.slice(0, 30)) === candidate)
    }))
  })

  it("never throws on arbitrary input", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      expect(typeof isWellFormedApiKey(s)).toBe("boolean")
      expect(typeof isWellFormedApiKey(API_KEY_PREFIX + s)).toBe("boolean")
    }))
  })

  it("the checksum is 6 base62 characters for every CRC value, and distinct CRCs print differently", () => {
    expect(toBase62(0, 6)).toBe("000000")
    expect(toBase62(0xffffffff, 6)).toHaveLength(6)
    expect(toBase62(61, 6)).toBe("00000z")
    expect(toBase62(62, 6)).toBe("000010")
    fc.assert(fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }), (a, b) => {
      expect(toBase62(a, 6)).toMatch(/^[0-9A-Za-z]{6}$/)
      if (a !== b) expect(toBase62(a, 6)).not.toBe(toBase62(b, 6))
    }))
  })

  it("base62FromBytes maps bytes below 248 by value mod 62 and skips the rest (no modulo bias)", () => {
    expect(base62FromBytes(Uint8Array.from([0, 61, 62, 247, 248, 255, 1]), 10)).toBe("0z0z1")
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat({ max: 100 }), (bytes, length) => {
      const out = base62FromBytes(bytes, length)
      const usable = [...bytes].filter((b) => b < 248)
      expect(out).toBe(usable.slice(0, length).map((b) => BASE62[b % 62]).join(""))
    }))
  })

  it("last4 shows the final four characters", () => {
    expect(apiKeyLast4(formatApiKey("0123456789ABCDEFGHIJabcdefghij"))).toBe(formatApiKey("0123456789ABCDEFGHIJabcdefghij").slice(-4))
  })

  it("a key whose random part is not base62 is refused even when its checksum matches (scanners match base62 only)", () => {
    for (const random of ["-".repeat(30), `${"a".repeat(29)}_`, `${"a".repeat(29)} `]) {
      expect(isWellFormedApiKey(formatApiKey(random)), JSON.stringify(random)).toBe(false)
    }
  })
})

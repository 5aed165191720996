import { randomBytes } from "node:crypto"
import { mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, Redacted } from "effect"
import { SecretBoxAesGcm, SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { SealedSecret } from "../../domain/Ids.js"
import { SecretBox } from "../../ports/SecretBox.js"

const K1 = randomBytes(32).toString("base64")
const K2 = randomBytes(32).toString("base64")

const boxWith = (config: Record<string, string>) =>
  SecretBoxAesGcm.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(config))))))

const secret = Redacted.make("ghp_SuperSecretToken123")
const AAD = "listing:lst_1:host_pat"

describe("SecretBoxAesGcm", () => {
  it.effect("round-trips a secret and does not show the plaintext in the sealed form", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = yield* box.seal(secret, AAD)
      expect(sealed).toMatch(/^v1\.a\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
      expect(sealed).not.toContain("SuperSecret")
      expect(sealed).not.toContain(Buffer.from("ghp_SuperSecretToken123").toString("base64url"))
      expect(Redacted.value(yield* box.open(sealed, AAD))).toBe("ghp_SuperSecretToken123")
      // A fresh IV each time: sealing the same secret twice gives two different strings.
      expect(yield* box.seal(secret, AAD)).not.toBe(sealed)
    }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))))

  it.effect("round-trips an empty and a non-ASCII secret", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      for (const text of ["", "clé secrète ✓"]) {
        const sealed = yield* box.seal(Redacted.make(text), AAD)
        expect(Redacted.value(yield* box.open(sealed, AAD))).toBe(text)
      }
    }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))))

  it.effect("refuses to open with the wrong aad", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = yield* box.seal(secret, AAD)
      const error = yield* Effect.flip(box.open(sealed, "listing:lst_2:host_pat"))
      expect(error._tag).toBe("SecretBoxError")
      expect(error.message).toMatch(/authentication/)
      expect(error.message).not.toContain("SuperSecret")
    }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))))

  it.effect("refuses tampered ciphertext, tag or iv", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = yield* box.seal(secret, AAD)
      const parts = sealed.split(".")
      for (const index of [2, 3, 4]) {
        const bytes = Buffer.from(parts[index]!, "base64url")
        bytes[0] = bytes[0]! ^ 1
        const tampered = [...parts]
        tampered[index] = bytes.toString("base64url")
        const error = yield* Effect.flip(box.open(SealedSecret.make(tampered.join(".")), AAD))
        expect(error.message, `part ${index}`).toMatch(/authentication/)
      }
    }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))))

  it.effect("refuses malformed sealed strings", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = yield* box.seal(secret, AAD)
      const [, , iv, ciphertext, tag] = sealed.split(".")
      const malformed = [
        "",
        "not sealed",
        sealed.replace(/^v1\./, "v2."),
        `${sealed}.x`,
        `v1.a.${iv}.${ciphertext}`,
        `v1.a.${iv}.${ciphertext}.${tag!.slice(1)}`, // short tag
        `v1.a.${iv}.${ciphertext}.${tag}=`, // not canonical base64url
        `v1.a!.${iv}.${ciphertext}.${tag}`
      ]
      for (const text of malformed) {
        const error = yield* Effect.flip(box.open(SealedSecret.make(text), AAD))
        expect(error.message, text).toBe("sealed secret is malformed")
      }
    }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))))

  it.effect("rotates keys: old seals still open, new seals use the first key", () =>
    Effect.gen(function*() {
      const old = yield* Effect.flatMap(SecretBox, (box) => box.seal(secret, AAD)).pipe(
        Effect.provide(boxWith({ SECRET_KEYS: `a:${K1}` }))
      )
      expect(old.split(".")[1]).toBe("a")
      yield* Effect.gen(function*() {
        const box = yield* SecretBox
        expect(Redacted.value(yield* box.open(old, AAD))).toBe("ghp_SuperSecretToken123")
        const fresh = yield* box.seal(secret, AAD)
        expect(fresh.split(".")[1]).toBe("b")
        expect(Redacted.value(yield* box.open(fresh, AAD))).toBe("ghp_SuperSecretToken123")
      }).pipe(Effect.provide(boxWith({ SECRET_KEYS: `b:${K2},a:${K1}` })))
      // Once `a` is retired, its seals no longer open.
      const error = yield* Effect.flatMap(SecretBox, (box) => Effect.flip(box.open(old, AAD))).pipe(
        Effect.provide(boxWith({ SECRET_KEYS: `b:${K2}` }))
      )
      expect(error.message).toBe(`sealed secret uses unknown key id "a"`)
    }))

  it.effect("fails construction on a malformed SECRET_KEYS, naming it and never echoing a key", () =>
    Effect.gen(function*() {
      const short = randomBytes(16).toString("base64")
      const cases = [`a:${short}`, K1, `:${K1}`, `a:${K1},a:${K2}`, `a:${K1},`, "", `a.b:${K1}`, `a:${K1}!`]
      for (const value of cases) {
        const error = yield* Effect.flip(Effect.provide(SecretBox, boxWith({ SECRET_KEYS: value })))
        const text = String(error)
        expect(text, value).toContain("SECRET_KEYS")
        for (const key of [K1, K2, short]) expect(text, value).not.toContain(key)
      }
    }))

  it.effect("digests tokens as SHA-256 hex", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      expect(box.digest(Redacted.make("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      const bytes = box.randomBytes(32)
      expect(bytes).toHaveLength(32)
      expect(Buffer.from(bytes).equals(Buffer.from(box.randomBytes(32)))).toBe(false)
    }).pipe(Effect.provide(SecretBoxTest)))

  it.effect("generates a development key into DATA_DIR when SECRET_KEYS is unset, and reuses it", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-keys-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const dataDir = join(dir, "nested", "data")
      const warnings: Array<string> = []
      const capture = Logger.add(
        Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(message))
        })
      )
      const dev = boxWith({ DATA_DIR: dataDir })

      const sealed = yield* Effect.flatMap(SecretBox, (box) => box.seal(secret, AAD)).pipe(
        Effect.provide(dev),
        Effect.provide(capture)
      )
      expect(sealed.split(".")[1]).toBe("dev1")
      const file = join(dataDir, "secret-keys")
      const content = yield* Effect.promise(() => readFile(file, "utf8"))
      expect(content).toMatch(/^dev1:[A-Za-z0-9+/]{43}=\n$/)
      expect((yield* Effect.promise(() => stat(file))).mode & 0o777).toBe(0o600)
      expect(warnings.join("\n")).toMatch(/generated development key.*Production must set SECRET_KEYS/s)

      // A second construction (a restart) reads the same key back.
      const opened = yield* Effect.flatMap(SecretBox, (box) => box.open(sealed, AAD)).pipe(Effect.provide(dev))
      expect(Redacted.value(opened)).toBe("ghp_SuperSecretToken123")
      expect(yield* Effect.promise(() => readFile(file, "utf8"))).toBe(content)

      // The development key is the key: SECRET_KEYS holding it opens the same seal.
      const fromEnv = yield* Effect.flatMap(SecretBox, (box) => box.open(sealed, AAD)).pipe(
        Effect.provide(boxWith({ SECRET_KEYS: content.trim() }))
      )
      expect(Redacted.value(fromEnv)).toBe("ghp_SuperSecretToken123")
    }).pipe(Effect.scoped))

  it.effect("fails construction when the development key file is malformed", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-keys-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      yield* Effect.promise(() => import("node:fs/promises").then((fs) => fs.writeFile(join(dir, "secret-keys"), "garbage")))
      const error = yield* Effect.flip(Effect.provide(SecretBox, boxWith({ DATA_DIR: dir })))
      expect(String(error)).toMatch(/DATA_DIR/)
      expect(String(error)).toMatch(/malformed/)
    }).pipe(Effect.scoped))
})

describe("SecretBoxTest", () => {
  it.effect("round-trips with a key of its own per construction", () =>
    Effect.gen(function*() {
      const sealed = yield* Effect.flatMap(SecretBox, (box) => box.seal(secret, AAD)).pipe(Effect.provide(SecretBoxTest))
      const again = yield* Effect.flatMap(SecretBox, (box) => box.open(sealed, AAD)).pipe(Effect.provide(SecretBoxTest))
        .pipe(Effect.flip)
      expect(again.message).toMatch(/authentication/)
      yield* Effect.gen(function*() {
        const box = yield* SecretBox
        const mine = yield* box.seal(secret, AAD)
        expect(Redacted.value(yield* box.open(mine, AAD))).toBe("ghp_SuperSecretToken123")
      }).pipe(Effect.provide(SecretBoxTest))
    }))
})

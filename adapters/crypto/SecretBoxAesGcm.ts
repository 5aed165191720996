import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Effect, Layer, Option, Redacted, type Context } from "effect"
import { SealedSecret, TokenDigest } from "../../domain/Ids.js"
import { SecretBox, SecretBoxError } from "../../ports/SecretBox.js"
import { KID, keyRingOf, loadKeyRing, type KeyRing } from "./SecretKeys.js"

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16
const BASE64URL = /^[A-Za-z0-9_-]*$/

interface Parsed {
  readonly kid: string
  readonly iv: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

// Only the canonical spelling decodes, so a sealed value has exactly one textual form.
const decode = (text: string): Option.Option<Buffer> => {
  if (!BASE64URL.test(text)) return Option.none()
  const bytes = Buffer.from(text, "base64url")
  return bytes.toString("base64url") === text ? Option.some(bytes) : Option.none()
}

/** `v1.<kid>.<iv>.<ciphertext>.<tag>`, base64url parts. */
const parse = (sealed: string): Option.Option<Parsed> => {
  const parts = sealed.split(".")
  if (parts.length !== 5) return Option.none()
  const [version, kid, iv, ciphertext, tag] = parts as [string, string, string, string, string]
  if (version !== VERSION || !KID.test(kid)) return Option.none()
  return Option.all({ iv: decode(iv), ciphertext: decode(ciphertext), tag: decode(tag) }).pipe(
    Option.filter((p) => p.iv.length === IV_BYTES && p.tag.length === TAG_BYTES),
    Option.map((p) => ({ kid, ...p }))
  )
}

/** AES-256-GCM with a fresh random IV per seal; `aad` binds a secret to its owner and purpose. */
export const makeSecretBox = (ring: KeyRing): Context.Tag.Service<SecretBox> => ({
  seal: (plaintext, aad) =>
    Effect.sync(() => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", Redacted.value(ring.primary.key), iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(aad, "utf8"))
      const ciphertext = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final()])
      const parts = [iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString("base64url"))
      return SealedSecret.make([VERSION, ring.primary.kid, ...parts].join("."))
    }),
  open: (sealed, aad) =>
    Effect.suspend(() => {
      const parsed = parse(sealed)
      if (Option.isNone(parsed)) return Effect.fail(new SecretBoxError({ message: "sealed secret is malformed" }))
      const { ciphertext, iv, kid, tag } = parsed.value
      const key = ring.byKid.get(kid)
      if (key === undefined) {
        return Effect.fail(new SecretBoxError({ message: `sealed secret uses unknown key id "${kid}"` }))
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", Redacted.value(key), iv, { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(aad, "utf8"))
        decipher.setAuthTag(tag)
        const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8")
        return Effect.succeed(Redacted.make(plaintext))
      } catch {
        return Effect.fail(
          new SecretBoxError({ message: "sealed secret failed authentication (tampered, wrong key or wrong aad)" })
        )
      }
    }),
  digest: (token) => TokenDigest.make(createHash("sha256").update(Redacted.value(token), "utf8").digest("hex")),
  randomBytes: (length) => randomBytes(length),
  mac: (message) => hmac(Redacted.value(ring.primary.key), message),
  verifyMac: (message, tag) => {
    const given = Buffer.from(tag, "utf8")
    for (const key of ring.byKid.values()) {
      const expected = Buffer.from(hmac(Redacted.value(key), message), "utf8")
      if (expected.length === given.length && timingSafeEqual(expected, given)) return true
    }
    return false
  }
})

/** MAC keys are derived from the encryption keys, so one key never serves two purposes directly. */
const hmac = (key: Uint8Array, message: string) =>
  createHmac("sha256", createHmac("sha256", key).update("repomarket/mac/v1").digest()).update(message, "utf8").digest("hex")

/** Keys from `SECRET_KEYS` (or a generated development key under `DATA_DIR`, with a warning). */
export const SecretBoxAesGcm = Layer.effect(SecretBox, Effect.map(loadKeyRing, makeSecretBox))

/** A fresh random key per construction, no configuration and no files: for tests. */
export const SecretBoxTest = Layer.sync(SecretBox, () => makeSecretBox(keyRingOf([{ kid: "test", key: randomBytes(32) }])))

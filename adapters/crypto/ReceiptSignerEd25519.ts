import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { type PublicKeyJwk, ReceiptSigner } from "../../ports/ReceiptSigner.js"
import { type KeyRing, keyRingOf, loadKeyRing } from "./SecretKeys.js"

/** What each `SECRET_KEYS` key is stretched with into its receipt-signing key: a key used for one purpose only. */
const SIGNING_KEY_INFO = "repomarket x402 offer-receipt signing key, Ed25519, v1"

/** The DER prefix of a PKCS #8 Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

const base64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url")

/**
 * JSON Canonicalization Scheme (RFC 8785) for the claims the marketplace signs: object keys sorted by UTF-16
 * code units, no whitespace; strings, safe integers, booleans and null as `JSON.stringify` writes them (which
 * RFC 8785 adopts). Anything else is a defect of the caller.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value)
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error("canonicalJson: only safe integers are signed")
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  throw new Error(`canonicalJson: cannot sign a ${typeof value}`)
}

/**
 * The `did:web` DID of a public origin (W3C did:web): the host, its port's colon percent-encoded, then the
 * path's segments joined by colons. `https://market.example` → `did:web:market.example`.
 */
export const didWebOf = (baseUrl: string): string => {
  const url = new URL(baseUrl)
  const path = url.pathname.split("/").filter((s) => s !== "").map(encodeURIComponent)
  return ["did:web", encodeURIComponent(url.host), ...path].join(":")
}

/** The Ed25519 key a `SECRET_KEYS` key derives (HKDF-SHA256, one purpose): the same key always gives the same. */
const signingKeyOf = (secret: Redacted.Redacted<Buffer>): KeyObject => {
  const seed = Buffer.from(hkdfSync("sha256", Redacted.value(secret), Buffer.alloc(0), SIGNING_KEY_INFO, 32))
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" })
}

/**
 * The marketplace's signer over a key ring: each key of `SECRET_KEYS` derives one Ed25519 key; the ring's
 * first key signs, and every key is published, so rotating `SECRET_KEYS` (a new key first, the old one kept)
 * rotates the signing key while receipts signed before still verify.
 */
export const makeReceiptSigner = (ring: KeyRing, baseUrl: string) => {
  const did = didWebOf(baseUrl)
  const ordered = [ring.primary.kid, ...[...ring.byKid.keys()].filter((kid) => kid !== ring.primary.kid)]
  const derived = ordered.map((kid) => {
    const privateKey = signingKeyOf(ring.byKid.get(kid)!)
    const { x } = createPublicKey(privateKey).export({ format: "jwk" })
    const jwk: PublicKeyJwk = { kty: "OKP", crv: "Ed25519", x: x!, kid: `${did}#${kid}`, alg: "EdDSA", use: "sig" }
    return { privateKey, jwk }
  })
  const current = derived[0]!
  const header = base64url(Buffer.from(JSON.stringify({ alg: "EdDSA", kid: current.jwk.kid }), "utf8"))
  return ReceiptSigner.of({
    did,
    keys: derived.map((k) => k.jwk),
    sign: (claims) =>
      Effect.sync(() => {
        const payload = base64url(Buffer.from(canonicalJson(claims), "utf8"))
        const signature = sign(null, Buffer.from(`${header}.${payload}`, "ascii"), current.privateKey)
        return `${header}.${payload}.${base64url(signature)}`
      }),
    signBytes: (bytes) => Effect.sync(() => ({ kid: current.jwk.kid, signature: new Uint8Array(sign(null, bytes, current.privateKey)) })),
    digest: (bytes) => ({ sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length })
  })
}

/** The signer over `SECRET_KEYS` (or the development key file), naming keys after `BASE_URL`'s did:web. */
export const ReceiptSignerLive = Layer.effect(
  ReceiptSigner,
  Effect.gen(function*() {
    // The secret box loads the same keys and says, once, when they are the development ones.
    const ring = yield* loadKeyRing.pipe(Logger.withMinimumLogLevel(LogLevel.Error))
    const { baseUrl } = yield* PublicOrigin
    return makeReceiptSigner(ring, baseUrl)
  })
)

/** A signer with a fresh random key, for tests. */
export const ReceiptSignerTest = Layer.effect(
  ReceiptSigner,
  Effect.map(PublicOrigin, ({ baseUrl }) => makeReceiptSigner(keyRingOf([{ kid: "test", key: randomBytes(32) }]), baseUrl))
)

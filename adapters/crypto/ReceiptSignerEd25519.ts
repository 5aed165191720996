import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { type PublicKeyJwk, ReceiptSigner } from "../../ports/ReceiptSigner.js"
import { didWebOf } from "../../domain/ReceiptClaims.js"
import { type KeyRing, keyRingOf, loadKeyRing } from "./SecretKeys.js"

/**
 * What each `SECRET_KEYS` key is stretched with into its receipt-signing key: a key used for one purpose only,
 * and for one deployment only. The context names the deployment's did:web DID (from `BASE_URL`), so two
 * deployments that share `SECRET_KEYS` (staging and production) still sign with different keys, and what one
 * signs never verifies against the other's published keys.
 */
const signingKeyInfo = (did: string): string => `repomarket x402 offer-receipt signing key, Ed25519, v2, ${did}`

/**
 * The context of the keys derived before keys were bound to their deployment (the same for every deployment
 * sharing `SECRET_KEYS`). They sign nothing any more; they are published, under the ids they signed with, only
 * so that receipts issued with them still verify.
 */
const PREVIOUS_KEY_INFO = "repomarket x402 offer-receipt signing key, Ed25519, v1"

/**
 * The suffix of a deployment-bound key's id (`did:web:<host>#<SECRET_KEYS id>.v2`): `.` is not allowed in a
 * `SECRET_KEYS` id, so it never names a previous key (`did:web:<host>#<SECRET_KEYS id>`).
 */
const BOUND_KEY_SUFFIX = ".v2"

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

export { didWebOf }

/** The Ed25519 key a `SECRET_KEYS` key derives in `info`'s context (HKDF-SHA256): the same key and context always give the same. */
const signingKeyOf = (secret: Redacted.Redacted<Uint8Array>, info: string): KeyObject => {
  const seed = Buffer.from(hkdfSync("sha256", Redacted.value(secret), Buffer.alloc(0), info, 32))
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" })
}

const jwkOf = (privateKey: KeyObject, kid: string): PublicKeyJwk => {
  const { x } = createPublicKey(privateKey).export({ format: "jwk" })
  return { kty: "OKP", crv: "Ed25519", x: x!, kid, alg: "EdDSA", use: "sig" }
}

/**
 * The marketplace's signer over a key ring for the deployment at `baseUrl`: each key of `SECRET_KEYS` derives
 * one Ed25519 key bound to `baseUrl`'s did:web DID (`<did>#<id>.v2`); the ring's first key signs, and every key
 * is published, so rotating `SECRET_KEYS` (a new key first, the old one kept) rotates the signing key while
 * receipts signed before still verify. With `previous` (the default), the keys each `SECRET_KEYS` key derived
 * before keys were bound to their deployment are published after those, under the ids they signed with
 * (`<did>#<id>`), to verify what they signed; they never sign again. A signer over fresh keys (tests) has none.
 */
export const makeReceiptSigner = (ring: KeyRing, baseUrl: string, options: { readonly previous?: boolean } = {}) => {
  const did = didWebOf(baseUrl)
  const ordered = [ring.primary.kid, ...[...ring.byKid.keys()].filter((kid) => kid !== ring.primary.kid)]
  const derived = ordered.map((kid) => {
    const privateKey = signingKeyOf(ring.byKid.get(kid)!, signingKeyInfo(did))
    return { privateKey, jwk: jwkOf(privateKey, `${did}#${kid}${BOUND_KEY_SUFFIX}`) }
  })
  const previous = options.previous === false
    ? []
    : ordered.map((kid) => jwkOf(signingKeyOf(ring.byKid.get(kid)!, PREVIOUS_KEY_INFO), `${did}#${kid}`))
  const current = derived[0]!
  const header = base64url(Buffer.from(JSON.stringify({ alg: "EdDSA", kid: current.jwk.kid }), "utf8"))
  return ReceiptSigner.of({
    origin: baseUrl,
    did,
    kid: current.jwk.kid,
    keys: [...derived.map((k) => k.jwk), ...previous],
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

/**
 * The signer over `SECRET_KEYS` (or the development key file), its keys derived for and named after `BASE_URL`'s
 * did:web, with the previous (deployment-free) keys published to verify what they signed.
 */
export const ReceiptSignerLive = Layer.effect(
  ReceiptSigner,
  Effect.gen(function*() {
    // The secret box loads the same keys and says, once, when they are the development ones.
    const ring = yield* loadKeyRing.pipe(Logger.withMinimumLogLevel(LogLevel.Error))
    const { baseUrl } = yield* PublicOrigin
    return makeReceiptSigner(ring, baseUrl)
  })
)

/** A signer with a fresh random key, for tests: nothing was signed before it, so it publishes no previous keys. */
export const ReceiptSignerTest = Layer.effect(
  ReceiptSigner,
  Effect.map(PublicOrigin, ({ baseUrl }) => makeReceiptSigner(keyRingOf([{ kid: "test", key: randomBytes(32) }]), baseUrl, { previous: false }))
)

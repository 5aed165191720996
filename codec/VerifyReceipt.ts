import { type ArchiveDigest, parseJws, receiptClaimsProblem, type ReceiptClaims } from "../domain/ReceiptClaims.js"

/** A published verification key as `/.well-known/jwks.json` lists it (an Ed25519 JWK with its `kid`). */
export interface ReceiptKey {
  /** Key type (`OKP` for Ed25519). */
  readonly kty: string
  /** The curve (`Ed25519`). */
  readonly crv?: string
  /** The public key, base64url. */
  readonly x?: string
  /** The key's id: the `kid` of what it signs. */
  readonly kid?: string
}

/** What a verified test-twin receipt or statement is, in the words every verifier prints. */
export const TEST_PURCHASE = "test purchase, simulated money"

/**
 * The money a verified receipt or statement stands for, from its signed `livemode`: a paid purchase
 * (`livemode: true`), or the test twin's (`livemode: false`, only when the caller accepted test ones), which
 * then says so in `test`.
 */
export type PurchaseMode =
  | { readonly livemode: true }
  | { readonly livemode: false; readonly test: typeof TEST_PURCHASE }

/** What a verifier is asked to accept beyond a paid purchase's proof. */
export interface VerifyOptions {
  /** The SHA-256 (hex) and size of the bytes you hold: they must be the archive the proof names. */
  readonly archive?: ArchiveDigest
  /**
   * Accept a test-twin proof (`livemode: false`: simulated money, no payment). Refused by default, so a test
   * purchase never passes for a paid one; accepted, the result says `livemode: false` and `test`.
   */
  readonly allowTest?: boolean
}

/** The reason a test-twin proof is refused by default; the verifiers' refusals start with it. */
export const TEST_REFUSED = "a test purchase (livemode: false), simulated money: nothing was paid"

/**
 * What `verifyReceipt` found: the receipt's claims, the key that signed it and whether money was paid
 * (`livemode`), or why it does not hold.
 */
export type ReceiptVerification =
  | ({ readonly valid: true; readonly claims: ReceiptClaims; readonly kid: string } & PurchaseMode)
  | { readonly valid: false; readonly reason: string }

/** The mode of a verified proof whose signed `livemode` is `livemode`; null when the caller did not accept test ones. */
export const purchaseMode = (livemode: boolean, options: VerifyOptions): PurchaseMode | null =>
  livemode ? { livemode: true } : options.allowTest === true ? { livemode: false, test: TEST_PURCHASE } : null

const isKeyList = (keys: ReadonlyArray<ReceiptKey> | { readonly keys: ReadonlyArray<ReceiptKey> }): keys is ReadonlyArray<ReceiptKey> =>
  Array.isArray(keys)

/** A JWK Set or its keys, as a list. */
export const keyListOf = (keys: ReadonlyArray<ReceiptKey> | { readonly keys: ReadonlyArray<ReceiptKey> }): ReadonlyArray<ReceiptKey> =>
  isKeyList(keys) ? keys : keys.keys

/**
 * Whether `signature` is an Ed25519 signature of `data` by the public key `x` (base64url, as a JWK has it), with
 * Web Crypto; null when `x` is not a usable Ed25519 public key.
 */
export const ed25519Verifies = async (x: string, signature: Uint8Array, data: Uint8Array): Promise<boolean | null> => {
  const publicKey = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, false, ["verify"]).then(
    (key) => key,
    () => null
  )
  return publicKey === null ? null : crypto.subtle.verify({ name: "Ed25519" }, publicKey, signature, data)
}

const refused = (reason: string): ReceiptVerification => ({ valid: false, reason })

const sameArchive = (a: ArchiveDigest | null, b: ArchiveDigest): boolean =>
  a !== null && a.sha256 === b.sha256.toLowerCase() && a.size === b.size

/**
 * Verifies a repomarket receipt offline: an x402 `offer-receipt` receipt in JWS format (the object
 * `{ format: "jws", signature }` from a `PAYMENT-RESPONSE`, or its JWS string from `X-Receipt`), against the
 * marketplace's published keys (the JWK Set of `/.well-known/jwks.json`, or its `keys` array). Checks, in
 * order: the JWS shape, the algorithm (EdDSA), that its `kid` is one of `keys`, the Ed25519 signature over the
 * exact bytes, that the signed payload is a receipt (an offer signed by the same key is not), and that it is a
 * paid purchase's (`livemode: true`): a test-twin receipt is refused unless `allowTest`, and accepted it says
 * `livemode: false, test: "test purchase, simulated money"`. With `archive` (the SHA-256 and size of the bytes
 * you hold), also that they are the bytes the receipt names.
 *
 * Pure and browser-safe: Web Crypto (Ed25519) only, no network, no Node API. Never throws: a receipt that
 * does not hold is `{ valid: false, reason }`, the reason naming the first check that failed.
 */
export const verifyReceipt = async (
  receipt: string | { readonly format: string; readonly signature: string },
  keys: ReadonlyArray<ReceiptKey> | { readonly keys: ReadonlyArray<ReceiptKey> },
  expected: VerifyOptions = {}
): Promise<ReceiptVerification> => {
  if (typeof receipt !== "string" && receipt.format !== "jws") return refused(`format is "${receipt.format}", not "jws"`)
  const jws = parseJws(typeof receipt === "string" ? receipt.trim() : receipt.signature)
  if (jws === null) return refused("not a JWS compact serialization (header.payload.signature, base64url JSON)")
  if (jws.header["alg"] !== "EdDSA") return refused(`alg is ${JSON.stringify(jws.header["alg"])}, not "EdDSA"`)
  const kid = jws.header["kid"]
  if (typeof kid !== "string") return refused("the JWS header names no kid")
  const list = keyListOf(keys)
  const key = list.find((k) => k.kid === kid)
  if (key === undefined) return refused(`signed by ${kid}, which is not among the given keys`)
  if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string") return refused(`key ${kid} is not an Ed25519 key`)
  const holds = await ed25519Verifies(key.x, jws.signature, new TextEncoder().encode(jws.signingInput))
  if (holds === null) return refused(`key ${kid} could not be used to verify (not a valid Ed25519 public key)`)
  if (!holds) return refused("the signature does not match: the receipt was altered or not signed by this key")
  const problem = receiptClaimsProblem(jws.payload)
  if (problem !== null) return refused(`the signed payload is not a receipt: ${problem}`)
  const claims = jws.payload as ReceiptClaims
  const mode = purchaseMode(claims.livemode, expected)
  if (mode === null) return refused(`${TEST_REFUSED}; accepted only when asked (allowTest)`)
  if (expected.archive !== undefined && !sameArchive(claims.archive, expected.archive)) {
    return refused(claims.archive === null
      ? "the receipt names no archive digest, so it cannot vouch for these bytes"
      : `the bytes differ from the receipt's archive (sha-256 ${claims.archive.sha256}, ${claims.archive.size} bytes)`)
  }
  return { valid: true, claims, kid, ...mode }
}

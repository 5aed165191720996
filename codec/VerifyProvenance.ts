import { DELIVERY_PREDICATE_TYPE, type DeliveryStatement, IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_TYPE, pae } from "../domain/Provenance.js"
import { didWebOf } from "../domain/ReceiptClaims.js"
import {
  ed25519Verifies,
  keyListOf,
  type PurchaseMode,
  purchaseMode,
  type ReceiptKey,
  TEST_REFUSED,
  type VerifyOptions
} from "./VerifyReceipt.js"
import { isRecord } from "../domain/Jws.js"

/**
 * What `verifyProvenance` found: the statement, the key that signed it (the one it names) and whether money was
 * paid (`livemode`), or why it does not hold.
 */
export type ProvenanceVerification =
  | ({ readonly valid: true; readonly statement: DeliveryStatement; readonly kid: string } & PurchaseMode)
  | { readonly valid: false; readonly reason: string }

const refused = (reason: string): ProvenanceVerification => ({ valid: false, reason })

/** Standard or URL-safe base64 → bytes; null when it is neither. */
const fromBase64 = (text: string): Uint8Array | null => {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return null
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"))
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  } catch {
    return null
  }
}

const subjectOf = (statement: Record<string, unknown>): { readonly sha256: string } | null => {
  const subject = Array.isArray(statement["subject"]) ? statement["subject"][0] : undefined
  const digest = isRecord(subject) && isRecord(subject["digest"]) ? subject["digest"]["sha256"] : undefined
  return typeof digest === "string" && /^[0-9a-f]{64}$/.test(digest) ? { sha256: digest } : null
}

const jsonOf = (payload: Uint8Array): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload)) }
  } catch {
    return { ok: false }
  }
}

/** The did:web DID of `origin`, or null when it is not a URL. */
const didOf = (origin: unknown): string | null => {
  if (typeof origin !== "string") return null
  try {
    return didWebOf(origin)
  } catch {
    return null
  }
}

/**
 * Verifies a repomarket provenance attestation offline: a DSSE envelope (JSON) carrying an in-toto Statement v1
 * of a delivery, against the marketplace's published keys (the JWK Set of `/.well-known/jwks.json`, or its
 * `keys`). Checks the envelope's shape and payload type, that a signature by one of `keys` holds over DSSE's
 * pre-authentication encoding of the exact payload, that the payload is a delivery statement with a SHA-256
 * subject, that the statement itself names that signature's key (`predicate.keyid`: DSSE does not sign an
 * envelope's `keyid`, so a rewritten one would otherwise go unnoticed) and the marketplace whose DID the key
 * belongs to (`predicate.marketplace`), that it is a paid purchase's (`livemode: true`; a test-twin statement
 * only with `allowTest`, and then it says `livemode: false, test: "test purchase, simulated money"`), and, with
 * `archive` (the SHA-256 and size of the bytes you hold), that they are its subject.
 *
 * Pure and browser-safe (Web Crypto Ed25519); never throws: a failure is `{ valid: false, reason }`.
 */
export const verifyProvenance = async (
  envelope: unknown,
  keys: ReadonlyArray<ReceiptKey> | { readonly keys: ReadonlyArray<ReceiptKey> },
  expected: VerifyOptions = {}
): Promise<ProvenanceVerification> => {
  if (!isRecord(envelope) || typeof envelope["payload"] !== "string" || !Array.isArray(envelope["signatures"])) {
    return refused("not a DSSE envelope (payloadType, payload, signatures)")
  }
  if (envelope["payloadType"] !== IN_TOTO_PAYLOAD_TYPE) return refused(`payloadType is not ${IN_TOTO_PAYLOAD_TYPE}`)
  const payload = fromBase64(envelope["payload"])
  if (payload === null) return refused("the payload is not base64")
  const signed = pae(IN_TOTO_PAYLOAD_TYPE, payload)
  const list = keyListOf(keys)
  // Every signature by a listed key that holds: which of them counts is decided by the statement's own keyid.
  const holding: Array<string> = []
  let known = false
  for (const entry of envelope["signatures"]) {
    const key = isRecord(entry) ? list.find((k) => k.kid === entry["keyid"]) : undefined
    const sig = isRecord(entry) && typeof entry["sig"] === "string" ? fromBase64(entry["sig"]) : null
    if (key === undefined || typeof key.x !== "string" || sig === null) continue
    known = true
    if (await ed25519Verifies(key.x, sig, signed) === true) holding.push(key.kid!)
  }
  if (holding.length === 0) {
    return refused(known ? "no signature matches: the statement was altered or not signed by these keys" : "signed by none of the given keys")
  }
  const parsed = jsonOf(payload)
  if (!parsed.ok) return refused("the payload is not UTF-8 JSON")
  const statement = parsed.value
  if (!isRecord(statement) || statement["_type"] !== IN_TOTO_STATEMENT_TYPE || statement["predicateType"] !== DELIVERY_PREDICATE_TYPE) {
    return refused("the payload is not an in-toto Statement of a repomarket delivery")
  }
  const subject = subjectOf(statement)
  if (subject === null) return refused("the statement names no SHA-256 subject")
  const predicate = isRecord(statement["predicate"]) ? statement["predicate"] : {}
  const named = predicate["keyid"]
  if (typeof named !== "string") {
    return refused("the statement does not name the key that signed it (predicate.keyid), so nothing binds it to these keys")
  }
  if (!holding.includes(named)) {
    return refused(`the statement names key ${named}, but its signature is under keyid ${holding[0]}: the envelope's keyid was rewritten`)
  }
  const did = didOf(predicate["marketplace"])
  if (did === null || !named.startsWith(`${did}#`)) {
    return refused(`the statement's marketplace ${JSON.stringify(predicate["marketplace"])} is not the origin key ${named} belongs to`)
  }
  if (typeof predicate["livemode"] !== "boolean") return refused("the statement does not say whether money was paid (livemode)")
  const mode = purchaseMode(predicate["livemode"], expected)
  if (mode === null) return refused(`${TEST_REFUSED}; accepted only when asked (allowTest)`)
  const size = predicate["size"]
  if (expected.archive !== undefined && (subject.sha256 !== expected.archive.sha256.toLowerCase() || size !== expected.archive.size)) {
    return refused(`the bytes differ from the statement's subject (sha-256 ${subject.sha256}, ${String(size)} bytes)`)
  }
  return { valid: true, statement: statement as unknown as DeliveryStatement, kid: named, ...mode }
}

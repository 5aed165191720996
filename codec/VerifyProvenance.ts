import { DELIVERY_PREDICATE_TYPE, type DeliveryStatement, IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_TYPE, pae } from "../model/Provenance.js"
import type { ArchiveDigest } from "../model/ReceiptClaims.js"
import { ed25519Verifies, keyListOf, type ReceiptKey } from "./VerifyReceipt.js"
import { isRecord } from "../model/Jws.js"

/** What `verifyProvenance` found: the statement and the key that signed it, or why it does not hold. */
export type ProvenanceVerification =
  | { readonly valid: true; readonly statement: DeliveryStatement; readonly kid: string }
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

/**
 * Verifies a repomarket provenance attestation offline: a DSSE envelope (JSON) carrying an in-toto Statement v1
 * of a delivery, against the marketplace's published keys (the JWK Set of `/.well-known/jwks.json`, or its
 * `keys`). Checks the envelope's shape and payload type, that a signature by one of `keys` holds over DSSE's
 * pre-authentication encoding of the exact payload, that the payload is a delivery statement with a SHA-256
 * subject, and, with `archive` (the SHA-256 and size of the bytes you hold), that they are its subject.
 *
 * Pure and browser-safe (Web Crypto Ed25519); never throws: a failure is `{ valid: false, reason }`.
 */
export const verifyProvenance = async (
  envelope: unknown,
  keys: ReadonlyArray<ReceiptKey> | { readonly keys: ReadonlyArray<ReceiptKey> },
  expected: { readonly archive?: ArchiveDigest } = {}
): Promise<ProvenanceVerification> => {
  if (!isRecord(envelope) || typeof envelope["payload"] !== "string" || !Array.isArray(envelope["signatures"])) {
    return refused("not a DSSE envelope (payloadType, payload, signatures)")
  }
  if (envelope["payloadType"] !== IN_TOTO_PAYLOAD_TYPE) return refused(`payloadType is not ${IN_TOTO_PAYLOAD_TYPE}`)
  const payload = fromBase64(envelope["payload"])
  if (payload === null) return refused("the payload is not base64")
  const signed = pae(IN_TOTO_PAYLOAD_TYPE, payload)
  const list = keyListOf(keys)
  let kid: string | null = null
  let known = false
  for (const entry of envelope["signatures"]) {
    const key = isRecord(entry) ? list.find((k) => k.kid === entry["keyid"]) : undefined
    const sig = isRecord(entry) && typeof entry["sig"] === "string" ? fromBase64(entry["sig"]) : null
    if (key === undefined || typeof key.x !== "string" || sig === null) continue
    known = true
    if (await ed25519Verifies(key.x, sig, signed) === true) {
      kid = key.kid!
      break
    }
  }
  if (kid === null) {
    return refused(known ? "no signature matches: the statement was altered or not signed by these keys" : "signed by none of the given keys")
  }
  let statement: unknown
  try {
    statement = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload))
  } catch {
    return refused("the payload is not UTF-8 JSON")
  }
  if (!isRecord(statement) || statement["_type"] !== IN_TOTO_STATEMENT_TYPE || statement["predicateType"] !== DELIVERY_PREDICATE_TYPE) {
    return refused("the payload is not an in-toto Statement of a repomarket delivery")
  }
  const subject = subjectOf(statement)
  if (subject === null) return refused("the statement names no SHA-256 subject")
  const size = isRecord(statement["predicate"]) ? statement["predicate"]["size"] : undefined
  if (expected.archive !== undefined && (subject.sha256 !== expected.archive.sha256.toLowerCase() || size !== expected.archive.size)) {
    return refused(`the bytes differ from the statement's subject (sha-256 ${subject.sha256}, ${String(size)} bytes)`)
  }
  return { valid: true, statement: statement as unknown as DeliveryStatement, kid }
}

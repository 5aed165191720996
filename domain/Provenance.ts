import type { ArchiveDigest, DeliveredUpdate } from "./ReceiptClaims.js"
import type { Sale } from "./Sale.js"

/**
 * Provenance of a delivered archive: an in-toto Statement (v1) whose subject is the archive (its SHA-256) and
 * whose predicate says where the bytes came from and for which sale, carried in a DSSE envelope signed with the
 * marketplace's key. It attests what the marketplace fetched from the code host and delivered, not how the
 * seller's code was built. Pure data and the DSSE pre-authentication encoding; signing is elsewhere.
 */

/** The in-toto Statement type. */
export const IN_TOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
/** The DSSE payload type of an in-toto Statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
/** The predicate type of a repomarket delivery. */
export const DELIVERY_PREDICATE_TYPE = "https://repomarket.dev/attestations/delivery/v1"

/**
 * Who signed a statement, inside what is signed (DSSE leaves an envelope's `keyid` unsigned): the marketplace's
 * public origin (`BASE_URL`) and the id of the key whose signature covers the statement, which names that
 * origin's did:web DID. A verifier requires the signature it checked to be by exactly this key, so an envelope
 * whose `keyid` was rewritten (to another deployment's, or to another key listed beside it) does not verify.
 */
export interface Attestor {
  /** The marketplace's public origin (`BASE_URL`), e.g. `https://market.example`. */
  readonly marketplace: string
  /** The signing key's id (its `kid`, `did:web:<host>#<id>`), the same as the envelope's signature's `keyid`. */
  readonly keyid: string
}

/** An in-toto Statement of one delivery, as signed: its predicate names the marketplace and key that sign it. */
export interface DeliveryStatement {
  /** The in-toto Statement type (v1). */
  readonly _type: typeof IN_TOTO_STATEMENT_TYPE
  /** The archive: its file name and SHA-256 (lower-case hex). */
  readonly subject: ReadonlyArray<{ readonly name: string; readonly digest: { readonly sha256: string } }>
  /** What the predicate is: a repomarket delivery. */
  readonly predicateType: typeof DELIVERY_PREDICATE_TYPE
  /** Where the bytes came from, for which sale, when, and the payment. */
  readonly predicate: {
    /** The repository's page on the code host. */
    readonly repository: string
    /** The commit the archive was cut from. */
    readonly commit: string
    /** The listing's id. */
    readonly listing: string
    /** The sale's id. */
    readonly sale: string
    /** The archive's size in bytes. */
    readonly size: number
    /** When the goods were released (the sale settled), ISO 8601. */
    readonly deliveredAt: string
    /** False for the test twin (its archive is a manifest, not the repository). */
    readonly livemode: boolean
    /** The payment the sale was settled with. */
    readonly payment: { readonly network: string; readonly transaction: string; readonly payer: string; readonly amount: string; readonly asset: string; readonly payTo: string }
    /** The update delivery's id (`dlv_…`) when the archive is a newer commit delivered within the sale's update window. */
    readonly delivery?: string
  } & Attestor
}

/** A delivery's statement before it is signed: everything but who signs it (`Attestor`). */
export type DeliveryFacts = Omit<DeliveryStatement, "predicate"> & {
  readonly predicate: Omit<DeliveryStatement["predicate"], keyof Attestor>
}

/** The statement `facts` as `by` signs it: the marketplace's origin and the signing key's id added to its predicate. */
export const attestedBy = (facts: DeliveryFacts, by: Attestor): DeliveryStatement => ({
  ...facts,
  predicate: { ...facts.predicate, marketplace: by.marketplace, keyid: by.keyid }
})

/** The statement of a settled sale's delivered archive (or of its update delivery `update`); null for a sale not settled or without a pinned commit. */
export const deliveryStatementOf = (
  sale: Sale,
  archive: ArchiveDigest,
  filename: string,
  repositoryUrl: string,
  update?: DeliveredUpdate
): DeliveryFacts | null => {
  if (sale.status !== "settled" || sale.settledAt === null || sale.commitSha === null || sale.transaction === null) return null
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [{ name: filename, digest: { sha256: archive.sha256 } }],
    predicateType: DELIVERY_PREDICATE_TYPE,
    predicate: {
      repository: repositoryUrl,
      commit: update?.commitSha ?? sale.commitSha,
      listing: sale.listingId,
      sale: sale.id,
      size: archive.size,
      deliveredAt: (update?.deliveredAt ?? sale.settledAt).toISOString(),
      livemode: sale.livemode,
      payment: { network: sale.network, transaction: sale.transaction, payer: sale.payer, amount: sale.amount.toString(), asset: sale.asset, payTo: sale.payTo },
      ...(update === undefined ? {} : { delivery: update.id })
    }
  }
}

const encoder = new TextEncoder()

/**
 * DSSE's pre-authentication encoding (v1), the bytes a signature covers:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII decimal byte counts.
 */
export const pae = (payloadType: string, body: Uint8Array): Uint8Array => {
  const type = encoder.encode(payloadType)
  const head = encoder.encode(`DSSEv1 ${type.length} ${payloadType} ${body.length} `)
  const out = new Uint8Array(head.length + body.length)
  out.set(head, 0)
  out.set(body, head.length)
  return out
}

/** A DSSE envelope (JSON), payload and signatures in standard base64. */
export interface DsseEnvelope {
  /** What the payload is (`IN_TOTO_PAYLOAD_TYPE`). */
  readonly payloadType: string
  /** The serialized statement, base64. */
  readonly payload: string
  /** Signatures over `pae(payloadType, payload)`, base64, each with the signing key's id (its `kid`). */
  readonly signatures: ReadonlyArray<{ readonly keyid: string; readonly sig: string }>
}

/** bytes → standard base64 (RFC 4648 §4, padded). Browser-safe (no Buffer). */
export const toBase64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

import type { ArchiveDigest } from "../domain/ReceiptClaims.js"

export { type ReceiptKey, type ReceiptVerification, verifyReceipt } from "./VerifyReceipt.js"

/**
 * The x402 extension key of signed offers and receipts (`OFFER_RECEIPT` of `@x402/extensions/offer-receipt`,
 * spelt here so that answering a 402 does not load that module's JOSE and curve libraries).
 */
export const OFFER_RECEIPT_KEY = "offer-receipt"

const OFFERS_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    version: { type: "integer" },
    offers: {
      type: "array",
      items: {
        type: "object",
        properties: {
          format: { type: "string", const: "jws" },
          acceptIndex: { type: "integer" },
          signature: { type: "string", description: "JWS compact serialization of the offer payload" }
        },
        required: ["format", "signature"]
      }
    }
  },
  required: ["version", "offers"]
} as const

/**
 * The `offer-receipt` extension of a 402 (`extensions["offer-receipt"]`, in the v2 `PAYMENT-REQUIRED` object and
 * the v1 body alike): one signed offer (a JWS, as `Quote.offers` has them) per payment option, in the order of
 * `accepts`. An official v2 client echoes it with its payment.
 */
export const offersExtension = (offers: ReadonlyArray<string>): Record<string, unknown> => ({
  [OFFER_RECEIPT_KEY]: {
    info: { version: 1, offers: offers.map((jws, acceptIndex) => ({ format: "jws", acceptIndex, signature: jws })) },
    schema: OFFERS_SCHEMA
  }
})

/** The `offer-receipt` extension of a settlement response (`PAYMENT-RESPONSE`): the signed receipt. */
export const receiptExtension = (jws: string): Record<string, unknown> => ({
  [OFFER_RECEIPT_KEY]: { info: { version: 1, receipt: { format: "jws", signature: jws } } }
})

/** RFC 9530 `Repr-Digest` of an archive: `sha-256=:<base64 of the digest>:`. */
export const reprDigest = (digest: ArchiveDigest): string => `sha-256=:${Buffer.from(digest.sha256, "hex").toString("base64")}:`

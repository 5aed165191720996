import type { DeliveryId, SaleId } from "../Ids.js"

/** A paid download can be fetched again for 7 days after settlement. */
export const RECEIPT_TTL_MS = 7 * 24 * 60 * 60 * 1000

/**
 * Receipts are stateless: `<sale id>.<mac>` under the SecretBox's MAC key, so the same payment presented
 * again yields the same receipt and nothing extra is stored. Expiry comes from the sale's settlement time.
 * An update delivery's own link is the same with its id (`dlv_…`): the id's prefix tells which it is.
 */
export const receiptToken = (saleId: SaleId | DeliveryId, mac: (message: string) => string): string =>
  `${saleId}.${mac(`receipt:${saleId}`)}`

/**
 * The sale (or update delivery, by its `dlv_` prefix) a receipt token names, or null when it is malformed or its
 * MAC does not verify. Expiry is checked separately (`receiptExpired`).
 */
export const parseReceipt = (
  token: string,
  verify: (message: string, tag: string) => boolean
): SaleId | DeliveryId | null => {
  const dot = token.indexOf(".")
  if (dot <= 0 || token.length > 200) return null
  const saleId = token.slice(0, dot)
  return verify(`receipt:${saleId}`, token.slice(dot + 1)) ? (saleId as SaleId | DeliveryId) : null
}

/** Whether a receipt for a sale settled at `settledAt` is past its 7 days at `now`. */
export const receiptExpired = (settledAt: Date, now: Date): boolean => now.getTime() - settledAt.getTime() > RECEIPT_TTL_MS

/**
 * What the marketplace signs, as x402's `offer-receipt` extension (v1) carries it in JWS payloads: an offer per
 * payment option of a 402, and a receipt per delivery. Beyond the extension's own fields (`version`,
 * `resourceUrl`, `scheme`, `network`, `asset`, `payTo`, `amount`, `validUntil`; `payer`, `issuedAt`,
 * `transaction`), both name what is sold: the listing, the repository, the commit the archive is cut from and,
 * once known, the archive's SHA-256 and size. Pure data and rules; signing and verifying are elsewhere.
 */

import { checkoutPath, testCheckoutPath } from "./Checkout.js"
import { isRecord, parseJws } from "./Jws.js"
import type { PaymentRequirement } from "./Payment.js"
import type { Sale } from "./Sale.js"

export { fromBase64Url, parseJws, toBase64Url } from "./Jws.js"

/** The extension's payload version these claims follow. */
export const OFFER_RECEIPT_VERSION = 1

/** What one commit's archive is: its SHA-256 (lower-case hex) and size in bytes. */
export interface ArchiveDigest {
  /** SHA-256 of the archive's bytes, lower-case hex. */
  readonly sha256: string
  /** The archive's length in bytes. */
  readonly size: number
}

/** What a 402 pins: the commit a purchase delivers and, once a first archive of it was cut, that archive. */
export interface Pin {
  /** The full commit id (40 hex digits) the archive is cut from. */
  readonly commit: string
  /** The archive of that commit, when known; null before its first cut. */
  readonly archive: ArchiveDigest | null
}

/** The claims of a signed offer: one payment option of a 402 and what it buys. */
export interface OfferClaims {
  /** The extension's payload version (`OFFER_RECEIPT_VERSION`). */
  readonly version: number
  /** The checkout URL paid. */
  readonly resourceUrl: string
  /** The x402 scheme (`exact`). */
  readonly scheme: string
  /** CAIP-2. */
  readonly network: string
  /** The token contract or mint. */
  readonly asset: string
  /** The payout address. */
  readonly payTo: string
  /** Atomic units, decimal. */
  readonly amount: string
  /** Unix seconds after which the offer is no longer honoured. */
  readonly validUntil: number
  /** The listing's id. */
  readonly listing: string
  /** `owner/name`. */
  readonly repository: string
  /** The commit a payment made against this offer delivers. */
  readonly commit: string
  /** The archive of that commit, when known. */
  readonly archive: ArchiveDigest | null
  /** False for the test twin (simulated money). */
  readonly livemode: boolean
  /**
   * Days after settlement during which the buyer may fetch the listing's newer commits without paying again
   * (0: none): the window a payment against this offer buys.
   */
  readonly updatesDays: number
}

/** The claims of a signed receipt: one payment bound to what was delivered for it, and when. */
export interface ReceiptClaims {
  /** The extension's payload version (`OFFER_RECEIPT_VERSION`). */
  readonly version: number
  /** CAIP-2. */
  readonly network: string
  /** The checkout URL paid. */
  readonly resourceUrl: string
  /** The paying address, as the payment's signature was checked against. */
  readonly payer: string
  /** Unix seconds the receipt stands from: the delivery time. */
  readonly issuedAt: number
  /** The settling transaction (simulated ones start with `sim_`). */
  readonly transaction: string
  /** The token contract or mint paid in. */
  readonly asset: string
  /** Atomic units, decimal. */
  readonly amount: string
  /** The payout address paid. */
  readonly payTo: string
  /** The sale's id. */
  readonly sale: string
  /** The listing's id. */
  readonly listing: string
  /** `owner/name`. */
  readonly repository: string
  /** The commit delivered. */
  readonly commit: string
  /** The delivered archive; null when its first cut was still streaming when the receipt was issued. */
  readonly archive: ArchiveDigest | null
  /** Unix seconds the goods were released (the sale settled). */
  readonly deliveredAt: number
  /** False for the test twin (simulated money; the archive is the twin's manifest, not the repository). */
  readonly livemode: boolean
  /**
   * The update delivery's id (`dlv_…`) when this receipt is for a newer commit delivered within the sale's update
   * window rather than for the purchase itself: then `commit`, `archive`, `deliveredAt` and `issuedAt` are the
   * update's, and the payment fields still the one payment that bought the window.
   */
  readonly delivery?: string
  /** Unix seconds the sale's update window closes; absent when the purchase came with no updates. */
  readonly updatesUntil?: number
}

const HEX_64 = /^[0-9a-f]{64}$/
const COMMIT = /^[0-9a-f]{40}$/

const isText = (value: unknown): value is string => typeof value === "string" && value.length > 0

const isSeconds = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0

/** Whether `value` is archive facts (or null), as the claims carry them. */
export const isArchiveDigest = (value: unknown): value is ArchiveDigest | null =>
  value === null ||
  (isRecord(value) && typeof value["sha256"] === "string" && HEX_64.test(value["sha256"]) && isSeconds(value["size"]))

const TEXT_FIELDS = ["network", "resourceUrl", "payer", "transaction", "asset", "amount", "payTo", "sale", "listing", "repository"] as const

/**
 * The reason `value` is not receipt claims, or null when it is. An offer (it names no payer) or anything else
 * signed by the same key is not a receipt.
 */
export const receiptClaimsProblem = (value: unknown): string | null => {
  if (!isRecord(value)) return "the payload is not a JSON object"
  if (value["version"] !== OFFER_RECEIPT_VERSION) return `version is not ${OFFER_RECEIPT_VERSION}`
  for (const field of TEXT_FIELDS) if (!isText(value[field])) return `${field} is missing or not a string`
  if (!/^[0-9]{1,78}$/.test(value["amount"] as string)) return "amount is not atomic units"
  if (typeof value["commit"] !== "string" || !COMMIT.test(value["commit"])) return "commit is not a 40-digit commit id"
  if (!isArchiveDigest(value["archive"])) return "archive is not {sha256, size} nor null"
  if (!isSeconds(value["issuedAt"])) return "issuedAt is not unix seconds"
  if (!isSeconds(value["deliveredAt"])) return "deliveredAt is not unix seconds"
  if (typeof value["livemode"] !== "boolean") return "livemode is not a boolean"
  if (value["delivery"] !== undefined && !isText(value["delivery"])) return "delivery is not a string"
  if (value["updatesUntil"] !== undefined && !isSeconds(value["updatesUntil"])) return "updatesUntil is not unix seconds"
  return null
}

/**
 * The `did:web` DID of a public origin (W3C did:web): the host, its port's colon percent-encoded, then the
 * path's segments joined by colons. `https://market.example` → `did:web:market.example`. The marketplace's keys
 * are named (`<did>#<id>`) and, since keys are bound to their deployment, derived after it.
 */
export const didWebOf = (baseUrl: string): string => {
  const url = new URL(baseUrl)
  const path = url.pathname.split("/").filter((s) => s !== "").map(encodeURIComponent)
  return ["did:web", encodeURIComponent(url.host), ...path].join(":")
}

/** Unix seconds of a date. */
export const unixSeconds = (at: Date): number => Math.floor(at.getTime() / 1000)

/**
 * The claims of the offer for `network` a v2 payment echoes (`extensions["offer-receipt"].info.offers`, the first
 * JWS offer for that network naming a commit): `absent` without an offer-receipt extension, null when none is
 * readable. Signatures are not checked: what is read is only compared with what the checkout sells now.
 */
const echoedOffer = (raw: unknown, network: string): Record<string, unknown> | null | "absent" => {
  const extensions = isRecord(raw) ? raw["extensions"] : undefined
  const extension = isRecord(extensions) ? extensions["offer-receipt"] : undefined
  if (extension === undefined) return "absent"
  const info = isRecord(extension) ? extension["info"] : undefined
  const offers = isRecord(info) && Array.isArray(info["offers"]) ? info["offers"] : []
  for (const offer of offers) {
    if (!isRecord(offer) || offer["format"] !== "jws" || typeof offer["signature"] !== "string") continue
    const claims = parseJws(offer["signature"])?.payload
    if (isRecord(claims) && claims["network"] === network && typeof claims["commit"] === "string") return claims
  }
  return null
}

/**
 * What a v2 payment echoes of the 402's signed offers (`extensions["offer-receipt"].info.offers`), read for the
 * payment's network: `absent` when it echoes no offer-receipt extension (x402 v1, or a client that sends no
 * extensions), else the commit the echoed offer for that network names, or `unreadable` when none names one.
 * Signatures are not checked here: the commit is only compared with the one the checkout sells now, so a
 * forged echo can only get its own payment refused.
 */
export const echoedCommit = (
  raw: unknown,
  network: string
): { readonly _tag: "absent" } | { readonly _tag: "unreadable" } | { readonly _tag: "names"; readonly commit: string } => {
  const claims = echoedOffer(raw, network)
  if (claims === "absent") return { _tag: "absent" }
  return claims === null ? { _tag: "unreadable" } : { _tag: "names", commit: claims["commit"] as string }
}

/**
 * The update window (`updatesDays`) the echoed offer for `network` names, or null when the payment echoes none
 * that names one (an offer signed before windows existed, x402 v1). Unchecked, like `echoedCommit`: compared
 * with the listing's window now, so a forged echo can only get its own payment refused.
 */
export const echoedUpdatesDays = (raw: unknown, network: string): number | null => {
  const claims = echoedOffer(raw, network)
  const days = claims === "absent" || claims === null ? undefined : claims["updatesDays"]
  return typeof days === "number" && Number.isSafeInteger(days) ? days : null
}

/** The signed offer of one payment option of a 402: its terms and what paying it buys, valid until `validUntil`. */
export const offerClaimsOf = (
  requirement: PaymentRequirement,
  sold: { readonly listing: string; readonly repository: string; readonly updatesDays: number },
  pin: Pin,
  validUntil: number
): OfferClaims => ({
  version: OFFER_RECEIPT_VERSION,
  resourceUrl: requirement.resource,
  scheme: requirement.scheme,
  network: requirement.network,
  asset: requirement.asset,
  payTo: requirement.payTo,
  amount: requirement.amount.toString(),
  validUntil,
  listing: sold.listing,
  repository: sold.repository,
  commit: pin.commit,
  archive: pin.archive,
  livemode: requirement.livemode,
  updatesDays: sold.updatesDays
})

/** What an update delivery adds to a sale's receipt: its id, the commit it delivered and when. */
export interface DeliveredUpdate {
  /** `dlv_…`. */
  readonly id: string
  /** The newer commit delivered. */
  readonly commitSha: string
  /** When it was delivered. */
  readonly deliveredAt: Date
}

const DAY_MS = 24 * 60 * 60 * 1000

/** When a settled sale's update window closes; null when it came with none (`updatesDays` 0) or is not settled. */
export const updatesUntil = (sale: Sale): Date | null =>
  sale.updatesDays > 0 && sale.settledAt !== null ? new Date(sale.settledAt.getTime() + sale.updatesDays * DAY_MS) : null

/**
 * The receipt of a settled sale: its payment (network, transaction, payer, amount, asset, payTo, and the
 * checkout paid under `baseUrl`), what it bought (listing, repository, commit, archive) and when the goods were
 * released (its settlement). The same sale and archive always make the same claims, so a re-download carries
 * the same receipt. With `update`, the receipt of that update delivery instead: the same payment, the update's
 * commit, archive and time, and its id. None for a sale not settled, or recorded before commits were pinned.
 */
export const receiptClaimsOf = (
  sale: Sale,
  baseUrl: string,
  archive: ArchiveDigest | null,
  update?: DeliveredUpdate
): ReceiptClaims | null => {
  if (sale.status !== "settled" || sale.settledAt === null || sale.commitSha === null || sale.transaction === null) return null
  const at = unixSeconds(update?.deliveredAt ?? sale.settledAt)
  const until = updatesUntil(sale)
  return {
    version: OFFER_RECEIPT_VERSION,
    network: sale.network,
    resourceUrl: baseUrl + (sale.livemode ? checkoutPath(sale.checkoutId) : testCheckoutPath(sale.checkoutId)),
    payer: sale.payer,
    issuedAt: at,
    transaction: sale.transaction,
    asset: sale.asset,
    amount: sale.amount.toString(),
    payTo: sale.payTo,
    sale: sale.id,
    listing: sale.listingId,
    repository: sale.repo,
    commit: update?.commitSha ?? sale.commitSha,
    archive,
    deliveredAt: at,
    livemode: sale.livemode,
    ...(update === undefined ? {} : { delivery: update.id }),
    ...(until === null ? {} : { updatesUntil: unixSeconds(until) })
  }
}

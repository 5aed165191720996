import { Schema } from "effect"
import type { Listing } from "../Listing.js"

/** Why a listing's checkout could not be rebuilt after an account wallet was added. */
export const SkipReason = Schema.Literal("not_priced", "host_unreachable", "taken_down")
/** One of `SkipReason`'s values. */
export type SkipReason = typeof SkipReason.Type

/** A listing that did not take a newly added account wallet, and why; reported back to the seller. */
export class SkippedListing extends Schema.Class<SkippedListing>("SkippedListing")({
  repo: Schema.String,
  reason: SkipReason
}) {}

/**
 * Whether a listing lacking the new wallet's chain can take it: a taken-down listing cannot, nor can one
 * without a price (its checkout could not sell), nor one the code host no longer serves (token revoked or
 * repo gone). Returns null when the listing can be rebuilt. Reporting instead of guessing is the contract.
 */
export const skipReason = (listing: Listing, hostReachable: boolean): SkipReason | null => {
  if (!listing.isLive) return "taken_down"
  if (listing.price === null) return "not_priced"
  if (!hostReachable) return "host_unreachable"
  return null
}

import { formatUsd } from "../Money.js"
import type { Listing } from "../Listing.js"
import { type Chain, chainsOf } from "../Wallet.js"

const chainName: Record<Chain, string> = { base: "Base", solana: "Solana" }

/** Chain names for display, e.g. "Base and Solana". */
export const chainNames = (chains: ReadonlyArray<Chain>): string =>
  chains.map((c) => chainName[c]).join(" and ")

/** `selling` is true exactly when the listing is live, has a price and resolves at least one payout address. */
export const isSelling = (listing: Listing): boolean =>
  listing.isLive && listing.price !== null && chainsOf(listing.payTo).length > 0

/** One sentence: what is missing, or what is on sale and on which chains. */
export const sellingNote = (listing: Listing): string => {
  if (!listing.isLive) return "Not selling: this listing was taken down."
  const chains = chainsOf(listing.payTo)
  const wallet = listing.accountId === null
    ? "a payout wallet (wallet_base or wallet_solana)"
    : "a payout wallet (wallet_base or wallet_solana, on the listing or as an account default)"
  if (listing.price === null && chains.length === 0) return `Not selling: set price_usd and add ${wallet}.`
  if (listing.price === null) return "Not selling: set price_usd to start selling."
  if (chains.length === 0) return `Not selling: add ${wallet}.`
  return `On sale for ${formatUsd(listing.price)} USDC on ${chainNames(chains)}.`
}

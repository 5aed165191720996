import type { Listing } from "../Listing.js"
import type { Address, Chain, Wallets } from "../Wallet.js"
import { apply, Patch } from "./ThreeState.js"

/** A wallet patch per chain, as read from a request. */
export interface WalletPatches {
  /** The patch of the Base payout address. */
  readonly base: Patch<Address>
  /** The patch of the Solana payout address. */
  readonly solana: Patch<Address>
}

/**
 * Where each chain's money goes when a checkout is built. Per chain: an address named on the listing wins;
 * else the address the listing already carries (it never moves because a default changed); else, for an
 * account listing only, the account default. Clearing the listing's own address (`""`) lets the chain fall
 * back to the account default. An anonymous listing (`accountDefaults` null) has no fallback: money never
 * routes on an identity that was not proved.
 */
export const resolvePayTo = (carried: Wallets, patches: WalletPatches, accountDefaults: Wallets | null): Wallets => {
  const resolve = (chain: Chain): Address | null => {
    const fallback = accountDefaults?.[chain] ?? null
    const patch = patches[chain]
    return patch._tag === "Keep" ? carried[chain] ?? fallback : apply(patch, null) ?? fallback
  }
  return { base: resolve("base"), solana: resolve("solana") }
}

/** Chains an account wallet would fill on this listing: only those it carries no address for. */
export const lacksChain = (listing: Listing, chain: Chain): boolean => listing.payTo[chain] === null

/** The listing's carried addresses with an account default filled in for one chain it lacks. */
export const fillChain = (payTo: Wallets, chain: Chain, address: Address): Wallets =>
  payTo[chain] === null ? { ...payTo, [chain]: address } : payTo

/** No wallet named: every chain keeps what it carries or falls back. */
export const keepAllWallets: WalletPatches = { base: Patch.Keep(), solana: Patch.Keep() }

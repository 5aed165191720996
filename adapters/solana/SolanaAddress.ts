import { isAddress } from "@solana/kit"
import { Either } from "effect"
import { Address, type ChainFacts } from "../../domain/Wallet.js"

const INVALID = "must be a Solana address (base58 of exactly 32 bytes)"

/**
 * Validates a Solana address: base58 that decodes to exactly 32 bytes. Base58 has one spelling per
 * byte string, so a valid address is already normal and is returned unchanged.
 */
export const normalizeSolanaAddress = (raw: string): Either.Either<Address, string> =>
  isAddress(raw) ? Either.right(Address.make(raw)) : Either.left(INVALID)

const LIVE: ChainFacts = {
  chain: "solana",
  livemode: true,
  network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  v1Network: "solana",
  asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  extra: {}
}

const TEST: ChainFacts = {
  chain: "solana",
  livemode: false,
  network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  v1Network: "solana-devnet",
  asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  extra: {}
}

/** x402 `exact` facts for USDC on Solana mainnet (live) or devnet (test). */
export const solanaFacts = (livemode: boolean): ChainFacts => (livemode ? LIVE : TEST)

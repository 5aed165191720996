import { isAddress } from "@solana/kit"
import { Either } from "effect"
import { Address } from "../../domain/Wallet.js"

const INVALID = "must be a Solana address (base58 of exactly 32 bytes)"

/**
 * Validates a Solana address: base58 that decodes to exactly 32 bytes. Base58 has one spelling per
 * byte string, so a valid address is already normal and is returned unchanged.
 */
export const normalizeSolanaAddress = (raw: string): Either.Either<Address, string> =>
  isAddress(raw) ? Either.right(Address.make(raw)) : Either.left(INVALID)

/** x402 `exact` facts for USDC on Solana mainnet (live) or devnet (test); the table lives in the model. */
export { solanaFacts } from "../../domain/ChainFacts.js"

import { Either } from "effect"
import { getAddress, isAddress } from "viem"
import { Address } from "../../domain/Wallet.js"

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/

const INVALID = "must be an EVM address (0x followed by 40 hexadecimal characters)"
const BAD_CHECKSUM = "must be an EVM address with a valid EIP-55 checksum"

/**
 * Validates a Base (EVM) address and returns it EIP-55 checksummed.
 * Single-case hex carries no checksum, so it is accepted and checksummed; mixed case is a checksum
 * and must be right, because a typo there would send a seller's money to nobody.
 */
export const normalizeBaseAddress = (raw: string): Either.Either<Address, string> => {
  if (!HEX_ADDRESS.test(raw)) return Either.left(INVALID)
  const hex = raw.slice(2)
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) {
    return Either.right(Address.make(getAddress(`0x${hex.toLowerCase()}`)))
  }
  return isAddress(raw, { strict: true }) ? Either.right(Address.make(raw)) : Either.left(BAD_CHECKSUM)
}

/** x402 `exact` facts for USDC on Base mainnet (live) or Base Sepolia (test); the table lives in the model. */
export { baseFacts } from "../../domain/ChainFacts.js"

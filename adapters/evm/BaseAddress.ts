import { Either } from "effect"
import { getAddress, isAddress } from "viem"
import { Address, type ChainFacts } from "../../domain/Wallet.js"

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

const LIVE: ChainFacts = {
  chain: "base",
  livemode: true,
  network: "eip155:8453",
  v1Network: "base",
  asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  // The USDC contract's EIP-712 domain; a wrong name makes every wallet's signature fail.
  extra: { name: "USD Coin", version: "2" }
}

const TEST: ChainFacts = {
  chain: "base",
  livemode: false,
  network: "eip155:84532",
  v1Network: "base-sepolia",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  extra: { name: "USDC", version: "2" }
}

/** x402 `exact` facts for USDC on Base mainnet (live) or Base Sepolia (test). */
export const baseFacts = (livemode: boolean): ChainFacts => (livemode ? LIVE : TEST)

import { Option } from "effect"
import type { ChainFacts } from "./Wallet.js"

/**
 * The x402 `exact` facts of the four networks this service sells on (DECISIONS.md "Chains"): CAIP-2 ids, v1
 * names, USDC contracts and mints. Plain data, so the model, the protocol codec and the chain adapters read one table.
 */
const BASE_LIVE: ChainFacts = {
  chain: "base",
  livemode: true,
  network: "eip155:8453",
  v1Network: "base",
  asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  // The USDC contract's EIP-712 domain; a wrong name makes every wallet's signature fail.
  extra: { name: "USD Coin", version: "2" }
}

const BASE_TEST: ChainFacts = {
  chain: "base",
  livemode: false,
  network: "eip155:84532",
  v1Network: "base-sepolia",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  extra: { name: "USDC", version: "2" }
}

const SOLANA_LIVE: ChainFacts = {
  chain: "solana",
  livemode: true,
  network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  v1Network: "solana",
  asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  extra: {}
}

const SOLANA_TEST: ChainFacts = {
  chain: "solana",
  livemode: false,
  network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  v1Network: "solana-devnet",
  asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  extra: {}
}

/** x402 `exact` facts for USDC on Base mainnet (live) or Base Sepolia (test). */
export const baseFacts = (livemode: boolean): ChainFacts => (livemode ? BASE_LIVE : BASE_TEST)

/** x402 `exact` facts for USDC on Solana mainnet (live) or devnet (test). */
export const solanaFacts = (livemode: boolean): ChainFacts => (livemode ? SOLANA_LIVE : SOLANA_TEST)

const ALL: ReadonlyArray<ChainFacts> = [BASE_LIVE, BASE_TEST, SOLANA_LIVE, SOLANA_TEST]

/** The CAIP-2 id of an x402 v1 network name (`base`, `base-sepolia`, `solana`, `solana-devnet`). */
export const caip2FromV1 = (v1Network: string): Option.Option<string> =>
  Option.fromNullable(ALL.find((f) => f.v1Network === v1Network)?.network)

/** The x402 v1 network name of a CAIP-2 id this service sells on. */
export const v1FromCaip2 = (network: string): Option.Option<string> =>
  Option.fromNullable(ALL.find((f) => f.network === network)?.v1Network)

import { Option } from "effect"
import type { ChainFacts } from "../../domain/Wallet.js"
import { baseFacts } from "../evm/BaseAddress.js"
import { solanaFacts } from "../solana/SolanaAddress.js"

// Derived from the chain facts (DECISIONS.md "Chains"), so the v1 names and CAIP-2 ids live in one place.
const FACTS: ReadonlyArray<ChainFacts> = [baseFacts(true), baseFacts(false), solanaFacts(true), solanaFacts(false)]

/** The CAIP-2 id of an x402 v1 network name (`base`, `base-sepolia`, `solana`, `solana-devnet`). */
export const caip2FromV1 = (v1Network: string): Option.Option<string> =>
  Option.fromNullable(FACTS.find((f) => f.v1Network === v1Network)?.network)

/** The x402 v1 network name of a CAIP-2 id this service sells on. */
export const v1FromCaip2 = (network: string): Option.Option<string> =>
  Option.fromNullable(FACTS.find((f) => f.network === network)?.v1Network)

/** Solana mainnet: the network whose facilitator fee payer live Solana checkouts name. */
export const SOLANA_MAINNET = solanaFacts(true)

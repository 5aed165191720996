import { Schema } from "effect"

/** The chains a listing can be paid on. Each has one payout address per listing. */
export const Chain = Schema.Literal("base", "solana")
/** One of the chains, `base` or `solana`. */
export type Chain = typeof Chain.Type
/** Every chain, in display order. */
export const CHAINS: ReadonlyArray<Chain> = ["base", "solana"]

/** The request field that names a chain's wallet, on listings and on the account alike. */
export const walletField = (chain: Chain): "wallet_base" | "wallet_solana" =>
  chain === "base" ? "wallet_base" : "wallet_solana"

/** An address already validated and normalised by the Chains port (EIP-55 for Base, base58 for Solana). */
export const Address = Schema.String.pipe(Schema.brand("Address"))
/** A validated, normalised payout address. */
export type Address = typeof Address.Type

/** One optional address per chain. */
export const Wallets = Schema.Struct({
  base: Schema.NullOr(Address),
  solana: Schema.NullOr(Address)
})
/** One optional payout address per chain. */
export type Wallets = typeof Wallets.Type

/** No payout address on any chain. */
export const noWallets: Wallets = { base: null, solana: null }

/** The chains that have an address in `wallets`, in `CHAINS` order. */
export const chainsOf = (wallets: Wallets): ReadonlyArray<Chain> => CHAINS.filter((c) => wallets[c] !== null)

/** Facts about a chain in one mode (live or test), as the x402 `exact` scheme needs them. */
export interface ChainFacts {
  /** The chain. */
  readonly chain: Chain
  /** Mainnet (true) or testnet (false). */
  readonly livemode: boolean
  /** CAIP-2 network id used by x402 v2. */
  readonly network: string
  /** Network name used by x402 v1. */
  readonly v1Network: string
  /** USDC contract (Base) or mint (Solana). */
  readonly asset: string
  /** Scheme extras, e.g. the EIP-712 domain of the USDC contract on Base. */
  readonly extra: Readonly<Record<string, string>>
}

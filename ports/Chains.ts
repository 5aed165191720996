import { Context, Data, type Effect } from "effect"
import type { Address, Chain, ChainFacts } from "../domain/Wallet.js"

export class InvalidAddress extends Data.TaggedError("InvalidAddress")<{
  readonly chain: Chain
  readonly message: string
}> {}

/** Per-chain knowledge the domain may not import: address rules and network facts. */
export class Chains extends Context.Tag("ports/Chains")<Chains, {
  /** Validates and normalises an address (EIP-55 checksum on Base, 32-byte base58 on Solana). */
  readonly normalize: (chain: Chain, raw: string) => Effect.Effect<Address, InvalidAddress>
  /** Network, asset and scheme facts for live or test money. */
  readonly facts: (chain: Chain, livemode: boolean) => ChainFacts
}>() {}

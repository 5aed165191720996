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
  /**
   * What identifies a payment on its chain, read from an `exact` scheme payload before anything is trusted:
   * EVM: the authorization's `from` and `nonce`; Solana: the payer's transaction signature. The same payment
   * presented twice yields the same key, so it can never make two sales.
   */
  readonly paymentIdentity: (
    chain: Chain,
    payload: unknown
  ) => Effect.Effect<PaymentIdentity, InvalidPayment>
}>() {}

export interface PaymentIdentity {
  readonly key: string
  readonly payer: string
  /** The last moment the payment can settle, when the payload says (EVM: `validBefore`); else null. */
  readonly settleBy: Date | null
}

export class InvalidPayment extends Data.TaggedError("InvalidPayment")<{ readonly message: string }> {}

import { Context, Data, type Effect, type Option } from "effect"
import type { AtomicAmount } from "../domain/Money.js"
import type { Address, Chain, ChainFacts } from "../domain/Wallet.js"

/**
 * Raised by `Chains.normalize` when a payout address is not valid for its chain; `message` is shown next to the
 * wallet field.
 */
export class InvalidAddress extends Data.TaggedError("InvalidAddress")<{
  readonly chain: Chain
  readonly message: string
}> {}

/** Per-chain knowledge the domain may not import: address rules and network facts. */
export class Chains extends Context.Tag("repomarket/Chains")<Chains, {
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
  /**
   * Checks a payment with nothing but its own bytes, before any facilitator is asked: it must be signed by its
   * payer (EVM: the EIP-3009 signature recovers to `from` under the token's EIP-712 domain; Solana: the
   * transfer authority's ed25519 signature over the message) and be for exactly `terms`. With `at`, the
   * payment must also be valid then (EVM: `validAfter`/`validBefore`). A refusal carries the x402 reason.
   */
  readonly checkPayment: (
    chain: Chain,
    payload: unknown,
    terms: PaymentTerms,
    at: Option.Option<Date>
  ) => Effect.Effect<void, PaymentRefused>
  /**
   * A recent Solana blockhash (and the last block height it is accepted at) from the server's own RPC endpoint,
   * for a browser that may talk to no other origin. `None` when the server reads no Solana RPC endpoint.
   */
  readonly latestSolanaBlockhash: Effect.Effect<Option.Option<RecentBlockhash>, ChainUnreachable>
}>() {}

/** A blockhash a Solana transaction may name, and the last block height at which the cluster still accepts it. */
export interface RecentBlockhash {
  readonly blockhash: string
  readonly lastValidBlockHeight: number
}

/** The chain's RPC endpoint gave no usable answer (no answer, an error, a malformed one). Names no URL: it may hold a key. */
export class ChainUnreachable extends Data.TaggedError("ChainUnreachable")<{}> {}

/** What a payment must be for: the terms of a requirement, or of a recorded sale. */
export interface PaymentTerms {
  /** CAIP-2. */
  readonly network: string
  /** The token contract (Base) or mint (Solana). */
  readonly asset: string
  /** The exact amount, in atomic units. */
  readonly amount: AtomicAmount
  /** The address that must receive it. */
  readonly payTo: string
  /** Scheme extras: the EIP-712 domain's `name` and `version` on Base; the `feePayer` on Solana. */
  readonly extra: Readonly<Record<string, string>>
}

/** A payment refused by the local check; `reason` is the x402 reason a facilitator would give. */
export class PaymentRefused extends Data.TaggedError("PaymentRefused")<{
  readonly reason: string
  readonly payer: string | null
}> {}

/** What identifies a payment on its chain, read by `Chains.paymentIdentity`. */
export interface PaymentIdentity {
  /** The payment's unique key: the same payment presented twice yields the same key. */
  readonly key: string
  /** The address that pays. */
  readonly payer: string
  /** The last moment the payment can settle, when the payload says (EVM: `validBefore`); else null. */
  readonly settleBy: Date | null
}

/** Raised by `Chains.paymentIdentity` when a payment payload cannot be read for its chain. */
export class InvalidPayment extends Data.TaggedError("InvalidPayment")<{ readonly message: string }> {}

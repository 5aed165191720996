import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import type { AtomicAmount } from "../domain/Money.js"
import type { Sale } from "../domain/Sale.js"
import type { Chain } from "../domain/Wallet.js"

/** One payment option a checkout offers: x402 `exact` scheme, USDC, one chain. */
export interface PaymentRequirement {
  /** The chain the payment is made on. */
  readonly chain: Chain
  /** Real money (true) or test money (false). */
  readonly livemode: boolean
  /** The x402 scheme: always `exact`. */
  readonly scheme: "exact"
  /** CAIP-2 network id (x402 v2). */
  readonly network: string
  /** Network name for x402 v1 (`base`, `base-sepolia`, `solana`, `solana-devnet`). */
  readonly v1Network: string
  /** The USDC contract (Base) or mint (Solana). */
  readonly asset: string
  /** The price, in atomic units. */
  readonly amount: AtomicAmount
  /** The payout address on this chain. */
  readonly payTo: string
  /** How long the payment may take to settle. */
  readonly maxTimeoutSeconds: number
  /** Absolute URL of the checkout being paid. */
  readonly resource: string
  /** What is being bought, for the wallet to show. */
  readonly description: string
  /** Scheme extras: the EIP-712 domain on Base; the fee payer (and a blockhash in test mode) on Solana. */
  readonly extra: Readonly<Record<string, string>>
}

/**
 * A payment as the buyer sent it: decoded from the `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1) header but
 * not yet trusted. `accepted` is what a v2 client says it paid for; v1 clients only name scheme and network.
 */
export interface SubmittedPayment {
  /** The x402 protocol version the buyer used. */
  readonly x402Version: 1 | 2
  /** The scheme the buyer names. */
  readonly scheme: string
  /** CAIP-2, v1 names already mapped. */
  readonly network: string
  /** What a v2 client says it paid for; None from a v1 client. */
  readonly accepted: Option.Option<{
    readonly scheme: string
    readonly network: string
    readonly asset: string
    readonly amount: string
    readonly payTo: string
  }>
  /** The scheme payload: `{ signature, authorization }` on EVM, `{ transaction }` on Solana. */
  readonly payload: unknown
  /**
   * The x402 `payment-identifier` id the buyer sent with a v2 payment (`extensions["payment-identifier"].info.id`),
   * already checked for its format. A secret of the buyer (it never goes on chain): kept redacted, never logged,
   * stored only as a keyed digest.
   */
  readonly paymentId?: Redacted.Redacted<string> | undefined
  /** The decoded header object, forwarded to an HTTP facilitator (without the buyer's payment-identifier id). */
  readonly raw: unknown
}

/** A facilitator's answer to verify. */
export interface Verification {
  /** Whether the payment can settle for the requirement. */
  readonly valid: boolean
  /** The x402 reason, when invalid. */
  readonly invalidReason: string | null
  /** The paying address, when known. */
  readonly payer: string | null
}

/** A facilitator's answer to settle. */
export interface Settlement {
  /** Whether the payment settled. */
  readonly success: boolean
  /** On-chain transaction id; simulated ones start with `sim_`. */
  readonly transaction: string | null
  /** The CAIP-2 network it settled on. */
  readonly network: string
  /** The paying address, when known. */
  readonly payer: string | null
  /** The x402 reason, when it failed. */
  readonly errorReason: string | null
}

/**
 * What the chain (or the facilitator) says now of a payment whose settle outcome was never heard (a settle
 * call that timed out, failed with a 5xx or lost its connection, a refusal, or a host that stopped mid-settle).
 * Only evidence of the very transfer the buyer signed for this sale counts, and only once final on its chain.
 * - `Settled`: that transfer (the sale's amount of its asset, from its payer to its `payTo`) is final on chain;
 *   the transaction if known.
 * - `Unsettled`: it has not moved so far. It may still move until the sale's `settleBy`; after that, never.
 * - `Failed`: it can never move: what the buyer signed was spent otherwise (an EIP-3009 nonce used by another
 *   authorization of the same payer, or cancelled; a Solana transaction that failed on chain). `reason` is a
 *   short code a buyer and a seller can read.
 * - `NotFinal`: what the buyer signed is on chain (its transfer, or another spend of its authorization, or a
 *   failed transaction) but not final yet: its fate is being decided, so the sale stays pending.
 * - `Unknown`: nobody can tell right now (no RPC endpoint configured or answering, or the evidence is out of
 *   the searched range).
 */
export type SettlementStatus =
  | { readonly _tag: "Settled"; readonly transaction: string | null }
  | { readonly _tag: "Unsettled" }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "NotFinal"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string }

/**
 * Raised when a facilitator could not be asked or answered nonsense: unreachable, timed out, or a bad response. A
 * settle that fails this way has an unknown outcome.
 */
export class FacilitatorError extends Data.TaggedError("FacilitatorError")<{
  readonly reason: "unreachable" | "timeout" | "bad_response"
  readonly message: string
}> {}

/** One x402 facilitator (real or simulated): verifies and settles payments, and tells what became of one. */
export interface Facilitator {
  /** Checks that a payment would settle for the requirement, moving no money. */
  readonly verify: (payment: SubmittedPayment, requirement: PaymentRequirement) => Effect.Effect<Verification, FacilitatorError>
  /** Settles the payment on chain. */
  readonly settle: (payment: SubmittedPayment, requirement: PaymentRequirement) => Effect.Effect<Settlement, FacilitatorError>
  /** Reads whether a recorded sale's payment settled, from the chain (live) or the simulated ledger (test). */
  readonly status: (sale: Sale) => Effect.Effect<SettlementStatus>
}

/**
 * Verifies and settles x402 payments: `live` through a real facilitator (none when the operator configured
 * none: live checkouts then answer 503), `test` through the simulated one behind the test twin.
 */
export class PaymentFacilitator extends Context.Tag("ports/PaymentFacilitator")<PaymentFacilitator, {
  readonly live: Option.Option<Facilitator>
  readonly test: Facilitator
  /**
   * Scheme extras this facilitator needs in the requirements beyond the chain's own facts: its Solana fee
   * payer (live: as the facilitator's `/supported` names it), and in test mode a simulated recent blockhash.
   */
  readonly extra: (chain: Chain, livemode: boolean) => Effect.Effect<Readonly<Record<string, string>>, FacilitatorError>
}>() {}

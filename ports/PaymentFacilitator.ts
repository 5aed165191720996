import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import type { AtomicAmount } from "../domain/Money.js"
import type { Sale } from "../domain/Sale.js"
import type { Chain } from "../domain/Wallet.js"
import type { PaymentRequirement, SubmittedPayment } from "../domain/Payment.js"

// The terms and the payment are model data (the rules match one against the other); re-exported here under the
// names adapters and hosts have always imported them by.
export type { PaymentRequirement, SubmittedPayment } from "../domain/Payment.js"

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
export class PaymentFacilitator extends Context.Tag("repomarket/PaymentFacilitator")<PaymentFacilitator, {
  readonly live: Option.Option<Facilitator>
  readonly test: Facilitator
  /**
   * Scheme extras this facilitator needs in the requirements beyond the chain's own facts: its Solana fee
   * payer (live: as the facilitator's `/supported` names it), and in test mode a simulated recent blockhash.
   */
  readonly extra: (chain: Chain, livemode: boolean) => Effect.Effect<Readonly<Record<string, string>>, FacilitatorError>
}>() {}

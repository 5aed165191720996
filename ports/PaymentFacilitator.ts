import { Context, Data, type Effect } from "effect"
import type { AtomicAmount } from "../domain/Money.js"

/** One payment option a checkout offers (x402 `exact` scheme). */
export interface PaymentRequirement {
  readonly network: string
  readonly asset: string
  readonly amount: AtomicAmount
  readonly payTo: string
  readonly maxTimeoutSeconds: number
  readonly resource: string
  readonly extra: Readonly<Record<string, string>>
}

export interface Verification {
  readonly valid: boolean
  readonly invalidReason: string | null
  readonly payer: string | null
}

export interface Settlement {
  readonly success: boolean
  readonly transaction: string | null
  readonly network: string
  readonly payer: string | null
  readonly errorReason: string | null
}

export class FacilitatorError extends Data.TaggedError("FacilitatorError")<{
  readonly reason: "not_configured" | "unreachable" | "timeout" | "bad_response"
  readonly message: string
}> {}

/** Verifies and settles x402 payments. `payment` is the decoded payment payload as the buyer sent it. */
export class PaymentFacilitator extends Context.Tag("ports/PaymentFacilitator")<PaymentFacilitator, {
  readonly verify: (payment: unknown, requirement: PaymentRequirement) => Effect.Effect<Verification, FacilitatorError>
  readonly settle: (payment: unknown, requirement: PaymentRequirement) => Effect.Effect<Settlement, FacilitatorError>
}>() {}

import { Effect, Either, Option } from "effect"
import { keccak256 } from "viem"
import type { PaymentRequirement, Settlement, SubmittedPayment, Verification } from "../../ports/PaymentFacilitator.js"
import { domainOf, eip3009TermsProblem, EvmReason, signatureValid } from "../evm/Eip3009Check.js"
import { eip3009Key, type Eip3009Payment, parseEip3009Payment } from "../evm/EvmPayment.js"
import type { SimulatedLedger } from "./SimulatedLedger.js"

/*
 * The `exact` EVM scheme (EIP-3009) checked the way @x402/evm's facilitator checks it, with the chain
 * replaced by the simulated ledger: the signature is really recovered; nonce state and balances are simulated.
 * Reason strings are @x402/evm 2.27's own (`invalid_exact_evm_*`), so a buyer reads the same words on both twins.
 */

export { EvmReason }

const invalid = (reason: string, payer: string | null): Verification => ({ valid: false, invalidReason: reason, payer })

const ledgerKey = (payment: Eip3009Payment): string => eip3009Key(payment.authorization)

/** Rules that need no signature check; the first broken one wins. */
const requirementProblem = (
  payment: Eip3009Payment,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string,
  nowSeconds: bigint
): string | undefined => {
  const accepted = Option.getOrUndefined(submitted.accepted)
  if (submitted.scheme !== "exact" || requirement.scheme !== "exact" || (accepted && accepted.scheme !== "exact")) {
    return EvmReason.scheme
  }
  if (submitted.network !== requirement.network || (accepted && accepted.network !== requirement.network)) {
    return EvmReason.networkMismatch
  }
  if (requirement.asset.toLowerCase() !== usdc.toLowerCase()) return EvmReason.unsupportedAsset
  if (!requirement.extra["name"] || !requirement.extra["version"]) return EvmReason.missingDomain
  return eip3009TermsProblem(payment, requirement, nowSeconds)
}

const verifyParsed = (
  ledger: SimulatedLedger,
  payment: Eip3009Payment,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string,
  nowSeconds: bigint
): Effect.Effect<Verification> =>
  Effect.gen(function*() {
    const payer = payment.authorization.from
    const problem = requirementProblem(payment, submitted, requirement, usdc, nowSeconds)
    if (problem !== undefined) return invalid(problem, payer)
    const domain = domainOf(requirement)
    if (domain === undefined) return invalid(EvmReason.missingDomain, payer)
    const signed = yield* Effect.promise(() => signatureValid(payment, domain))
    if (!signed) return invalid(EvmReason.signature, payer)
    if (ledger.isUsed(requirement.network, ledgerKey(payment))) return invalid(EvmReason.nonceUsed, payer)
    if (ledger.balanceOf(requirement.network, payer) < payment.authorization.value) {
      return invalid(EvmReason.insufficientBalance, payer)
    }
    return { valid: true, invalidReason: null, payer }
  })

/** Verifies an `exact` EVM payment against one requirement on a simulated network; never fails. */
export const verifyEvmSimulated = (
  ledger: SimulatedLedger,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string,
  nowSeconds: bigint
): Effect.Effect<Verification> =>
  Either.match(parseEip3009Payment(submitted.payload), {
    onLeft: (problem) => Effect.succeed(invalid(problem.reason, null)),
    onRight: (payment) => verifyParsed(ledger, payment, submitted, requirement, usdc, nowSeconds)
  })

/**
 * Settles on the simulated ledger after verifying again: the nonce is marked used and the value moves
 * from payer to payTo. The transaction id is `sim_` + a hash of the signature, so it can never be mistaken
 * for (or looked up as) a real Base transaction.
 */
export const settleEvmSimulated = (
  ledger: SimulatedLedger,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string,
  nowSeconds: bigint
): Effect.Effect<Settlement> =>
  Effect.gen(function*() {
    const failed = (reason: string, payer: string | null): Settlement => ({
      success: false,
      transaction: null,
      network: requirement.network,
      payer,
      errorReason: reason
    })
    const verification = yield* verifyEvmSimulated(ledger, submitted, requirement, usdc, nowSeconds)
    if (!verification.valid) return failed(verification.invalidReason ?? EvmReason.payload, verification.payer)
    // Verified above, so the payload parses.
    const payment = Either.getOrThrow(parseEip3009Payment(submitted.payload))
    const transaction = `sim_${keccak256(payment.signature)}`
    const moved = ledger.transfer({
      network: requirement.network,
      key: ledgerKey(payment),
      from: payment.authorization.from,
      to: payment.authorization.to,
      amount: payment.authorization.value,
      transaction
    })
    if (Either.isLeft(moved)) {
      return failed(moved.left === "already_used" ? EvmReason.nonceUsed : EvmReason.insufficientBalance, verification.payer)
    }
    return {
      success: true,
      transaction,
      network: requirement.network,
      payer: payment.authorization.from,
      errorReason: null
    }
  })

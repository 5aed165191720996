import { Effect, Either, Option } from "effect"
import { getAddress, type Hex, isAddress, keccak256 } from "viem"
import type { PaymentRequirement, Settlement, SubmittedPayment, Verification } from "../../ports/PaymentFacilitator.js"
import { eip3009Key, type Eip3009Payment, evmChainId, parseEip3009Payment, verifyEip3009Signature } from "../evm/EvmPayment.js"
import type { SimulatedLedger } from "./SimulatedLedger.js"

/*
 * The `exact` EVM scheme (EIP-3009) checked the way @x402/evm's facilitator checks it, with the chain
 * replaced by the simulated ledger: the signature is really recovered; nonce state and balances are simulated.
 * Reason strings are @x402/evm 2.27's own (`invalid_exact_evm_*`), so a buyer reads the same words on both twins.
 */

export const EvmReason = {
  payload: "invalid_payload",
  scheme: "invalid_exact_evm_scheme",
  networkMismatch: "invalid_exact_evm_network_mismatch",
  /** Not an @x402/evm reason: the simulated ledger only holds the test network's USDC. */
  unsupportedAsset: "unsupported_asset",
  missingDomain: "invalid_exact_evm_missing_eip712_domain",
  recipientMismatch: "invalid_exact_evm_recipient_mismatch",
  valueMismatch: "invalid_exact_evm_payload_authorization_value_mismatch",
  validBefore: "invalid_exact_evm_payload_authorization_valid_before",
  validAfter: "invalid_exact_evm_payload_authorization_valid_after",
  signature: "invalid_exact_evm_signature",
  nonceUsed: "invalid_exact_evm_nonce_already_used",
  insufficientBalance: "invalid_exact_evm_insufficient_balance"
} as const

/** @x402/evm refuses an authorization that expires within this many seconds: settlement needs the time. */
const VALID_BEFORE_MARGIN_SECONDS = 6n

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
  const { authorization } = payment
  const accepted = Option.getOrUndefined(submitted.accepted)
  if (submitted.scheme !== "exact" || requirement.scheme !== "exact" || (accepted && accepted.scheme !== "exact")) {
    return EvmReason.scheme
  }
  if (submitted.network !== requirement.network || (accepted && accepted.network !== requirement.network)) {
    return EvmReason.networkMismatch
  }
  if (requirement.asset.toLowerCase() !== usdc.toLowerCase()) return EvmReason.unsupportedAsset
  if (!requirement.extra["name"] || !requirement.extra["version"]) return EvmReason.missingDomain
  if (!isAddress(requirement.payTo, { strict: false }) || getAddress(requirement.payTo.toLowerCase()) !== authorization.to) {
    return EvmReason.recipientMismatch
  }
  if (authorization.value !== requirement.amount) return EvmReason.valueMismatch
  if (authorization.validBefore < nowSeconds + VALID_BEFORE_MARGIN_SECONDS) return EvmReason.validBefore
  if (authorization.validAfter > nowSeconds) return EvmReason.validAfter
  return undefined
}

type Eip712Domain = Parameters<typeof verifyEip3009Signature>[1]

/*
 * Checking an EIP-712 signature costs ~0.4 ms of CPU (the EIP-712 hash, then libsecp256k1 recovery) and a
 * purchase asks twice: verify, then settle verifies again. Whether a signature is valid is a pure function of
 * (domain, authorization, signature), so a verdict already reached in this process is reused; nonce, balance
 * and time checks still run every time. Bounded: the oldest verdicts are dropped first.
 */
const SIGNATURE_MEMO_SIZE = 4096
const signatureMemo = new Map<string, boolean>()

const signatureValid = (payment: Eip3009Payment, domain: Eip712Domain): Promise<boolean> => {
  const a = payment.authorization
  const key = JSON.stringify([
    domain.chainId, domain.verifyingContract, domain.name, domain.version,
    a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, payment.signature
  ].map(String))
  const known = signatureMemo.get(key)
  if (known !== undefined) return Promise.resolve(known)
  return verifyEip3009Signature(payment, domain).then((valid) => {
    if (signatureMemo.size >= SIGNATURE_MEMO_SIZE) signatureMemo.delete(signatureMemo.keys().next().value!)
    signatureMemo.set(key, valid)
    return valid
  })
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
    const signed = yield* Effect.promise(() =>
      signatureValid(payment, {
        name: requirement.extra["name"]!,
        version: requirement.extra["version"]!,
        chainId: evmChainId(requirement.network)!,
        verifyingContract: getAddress(requirement.asset.toLowerCase()) as Hex
      })
    )
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

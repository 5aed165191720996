import { type Address, getPublicKeyFromAddress, isAddress, type SignatureBytes, verifySignature } from "@solana/kit"
import { Effect, Either, Option } from "effect"
import type { PaymentRequirement, Settlement, SubmittedPayment, Verification } from "../../ports/PaymentFacilitator.js"
import {
  associatedTokenAddress,
  base58,
  type DecodedSolanaPayment,
  decodeSolanaPayment,
  isMemo,
  parseComputeUnitLimit,
  parseComputeUnitPrice,
  parseTransferChecked,
  type TransferChecked
} from "../solana/SolanaPayment.js"
import type { SimulatedLedger } from "./SimulatedLedger.js"

/*
 * The `exact` SVM scheme checked the way @x402/svm's facilitator checks a standard wallet's transaction
 * (its "static path"): compute limit, compute price, TransferChecked, then at most one Memo. Signatures
 * are really verified (ed25519); the chain is the simulated ledger. Reasons are @x402/svm 2.27's own.
 */

export const SvmReason = {
  scheme: "invalid_exact_svm_unsupported_scheme",
  networkMismatch: "invalid_exact_svm_network_mismatch",
  /** Not an @x402/svm reason: the simulated ledger only holds the test network's USDC. */
  unsupportedAsset: "unsupported_asset",
  missingFeePayer: "invalid_exact_svm_payload_missing_fee_payer",
  feePayerNotManaged: "invalid_exact_svm_fee_payer_not_managed_by_facilitator",
  undecodable: "invalid_exact_svm_payload_transaction_could_not_be_decoded",
  feePayerMismatch: "invalid_exact_svm_fee_payer_mismatch",
  excessiveSigners: "invalid_exact_svm_payload_excessive_signers",
  signature: "invalid_exact_svm_payload_signature_invalid",
  instructionsLength: "invalid_exact_svm_payload_transaction_instructions_length",
  computeLimit: "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction",
  computePrice: "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction",
  computePriceTooHigh: "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
  noTransfer: "invalid_exact_svm_payload_no_transfer_instruction",
  unknownFourth: "invalid_exact_svm_payload_unknown_fourth_instruction",
  feePayerTransferring: "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds",
  /** x402 v1's name: the fee payer must not be touched by any instruction, or the buyer could spend its SOL. */
  feePayerInInstruction: "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts",
  mintMismatch: "invalid_exact_svm_payload_mint_mismatch",
  recipientMismatch: "invalid_exact_svm_payload_recipient_mismatch",
  amountMismatch: "invalid_exact_svm_payload_amount_mismatch",
  /** What a real simulation reports for wrong decimals or a source that is not the authority's token account. */
  simulationFailed: "invalid_exact_svm_transaction_simulation_failed",
  duplicate: "duplicate_settlement",
  insufficientFunds: "insufficient_funds"
} as const

/** @x402/svm's ceiling on the priority fee a buyer may make the facilitator pay. */
export const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS = 5_000_000n
const USDC_DECIMALS = 6

/** The simulated facilitator's Solana key: pays fees (never lamports here) and signs at settlement. */
export interface SimulatedFeePayer {
  readonly address: string
  readonly sign: (message: Uint8Array) => Promise<Uint8Array>
}

type Checked = Either.Either<{ readonly transfer: TransferChecked; readonly decoded: DecodedSolanaPayment }, Verification>

const invalid = (reason: string, payer: string | null = null): Verification => ({ valid: false, invalidReason: reason, payer })

const verifyEd25519 = async (address: string, signature: Uint8Array, message: Uint8Array): Promise<boolean> => {
  try {
    const key = await getPublicKeyFromAddress(address as Address)
    return await verifySignature(key, signature as SignatureBytes, message)
  } catch {
    return false
  }
}

/** Positional layout, as @x402/svm's static path: [limit, price, transfer, memo?]. */
const layoutProblem = (decoded: DecodedSolanaPayment): string | TransferChecked => {
  const ixs = decoded.instructions
  if (ixs.length < 3 || ixs.length > 4) return SvmReason.instructionsLength
  if (parseComputeUnitLimit(ixs[0]!) === undefined) return SvmReason.computeLimit
  const price = parseComputeUnitPrice(ixs[1]!)
  if (price === undefined) return SvmReason.computePrice
  if (price > MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS) return SvmReason.computePriceTooHigh
  const transfer = parseTransferChecked(ixs[2]!)
  if (transfer === undefined) return SvmReason.noTransfer
  if (ixs[3] !== undefined && !isMemo(ixs[3])) return SvmReason.unknownFourth
  return transfer
}

const check = (
  ledger: SimulatedLedger,
  feePayer: SimulatedFeePayer,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string
): Effect.Effect<Checked> =>
  Effect.gen(function*() {
    const fail = (reason: string, payer: string | null = null): Checked => Either.left(invalid(reason, payer))
    const accepted = Option.getOrUndefined(submitted.accepted)
    if (submitted.scheme !== "exact" || requirement.scheme !== "exact" || (accepted && accepted.scheme !== "exact")) {
      return fail(SvmReason.scheme)
    }
    if (submitted.network !== requirement.network || (accepted && accepted.network !== requirement.network)) {
      return fail(SvmReason.networkMismatch)
    }
    if (requirement.asset !== usdc) return fail(SvmReason.unsupportedAsset)
    const expectedFeePayer = requirement.extra["feePayer"]
    if (!expectedFeePayer) return fail(SvmReason.missingFeePayer)
    if (expectedFeePayer !== feePayer.address) return fail(SvmReason.feePayerNotManaged)
    const decodedOrError = decodeSolanaPayment(submitted.payload)
    if (Either.isLeft(decodedOrError)) return fail(SvmReason.undecodable)
    const decoded = decodedOrError.right
    if (decoded.feePayer !== feePayer.address) return fail(SvmReason.feePayerMismatch)
    // Fee payer plus the buyer; anything more would be a signer we cannot account for.
    if (decoded.signers.length > 2) return fail(SvmReason.excessiveSigners)
    for (const signer of decoded.signers.slice(1)) {
      const ok = signer.signature !== null && (yield* Effect.promise(() =>
        verifyEd25519(signer.address, signer.signature!, decoded.messageBytes)
      ))
      if (!ok) return fail(SvmReason.signature)
    }
    const layout = layoutProblem(decoded)
    if (typeof layout === "string") return fail(layout)
    const transfer = layout
    const payer = transfer.authority
    if (payer === feePayer.address) return fail(SvmReason.feePayerTransferring, payer)
    // The authority must be one of the signers verified above, or the token program would refuse it.
    if (!decoded.signers.slice(1).some((s) => s.address === payer)) return fail(SvmReason.signature, payer)
    if (decoded.instructions.some((ix) => ix.accounts.includes(feePayer.address))) {
      return fail(SvmReason.feePayerInInstruction, payer)
    }
    if (transfer.mint !== requirement.asset) return fail(SvmReason.mintMismatch, payer)
    if (!isAddress(requirement.payTo)) return fail(SvmReason.recipientMismatch, payer)
    const expectedDestination = yield* Effect.promise(() =>
      associatedTokenAddress(requirement.payTo, transfer.mint, transfer.program)
    )
    if (transfer.destination !== expectedDestination) return fail(SvmReason.recipientMismatch, payer)
    if (transfer.amount !== requirement.amount) return fail(SvmReason.amountMismatch, payer)
    const expectedSource = yield* Effect.promise(() => associatedTokenAddress(payer, transfer.mint, transfer.program))
    if (transfer.decimals !== USDC_DECIMALS || transfer.source !== expectedSource) {
      return fail(SvmReason.simulationFailed, payer)
    }
    if (ledger.isUsed(requirement.network, identityKey(decoded, payer))) return fail(SvmReason.duplicate, payer)
    if (ledger.balanceOf(requirement.network, payer) < transfer.amount) return fail(SvmReason.insufficientFunds, payer)
    return Either.right({ transfer, decoded })
  })

// The same key Chains.paymentIdentity yields: the authority's signature (checked present above).
const identityKey = (decoded: DecodedSolanaPayment, authority: string): string =>
  `solana:${base58(decoded.signers.find((s) => s.address === authority)!.signature!)}`

/** Verifies an `exact` SVM payment against one requirement on the simulated devnet; never fails. */
export const verifySolanaSimulated = (
  ledger: SimulatedLedger,
  feePayer: SimulatedFeePayer,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string
): Effect.Effect<Verification> =>
  check(ledger, feePayer, submitted, requirement, usdc).pipe(
    Effect.map(Either.match({
      onLeft: (v) => v,
      onRight: ({ transfer }) => ({ valid: true, invalidReason: null, payer: transfer.authority })
    }))
  )

/**
 * Settles on the simulated ledger after verifying again: the fee payer really signs the message (as it
 * would before broadcasting), and its signature, the Solana transaction id, is returned as `sim_<base58>`.
 */
export const settleSolanaSimulated = (
  ledger: SimulatedLedger,
  feePayer: SimulatedFeePayer,
  submitted: SubmittedPayment,
  requirement: PaymentRequirement,
  usdc: string
): Effect.Effect<Settlement> =>
  Effect.gen(function*() {
    const failed = (reason: string, payer: string | null): Settlement =>
      ({ success: false, transaction: null, network: requirement.network, payer, errorReason: reason })
    const checked = yield* check(ledger, feePayer, submitted, requirement, usdc)
    if (Either.isLeft(checked)) return failed(checked.left.invalidReason ?? SvmReason.undecodable, checked.left.payer)
    const { decoded, transfer } = checked.right
    const feePayerSignature = yield* Effect.promise(() => feePayer.sign(decoded.messageBytes))
    const transaction = `sim_${base58(feePayerSignature)}`
    const moved = ledger.transfer({
      network: requirement.network,
      key: identityKey(decoded, transfer.authority),
      from: transfer.authority,
      to: requirement.payTo,
      amount: transfer.amount,
      transaction
    })
    if (Either.isLeft(moved)) {
      return failed(moved.left === "already_used" ? SvmReason.duplicate : SvmReason.insufficientFunds, transfer.authority)
    }
    return {
      success: true,
      transaction,
      network: requirement.network,
      payer: transfer.authority,
      errorReason: null
    }
  })

import { isAddress } from "@solana/kit"
import { Effect, Either, Option } from "effect"
import type { PaymentRequirement, Settlement, SubmittedPayment, Verification } from "../../ports/PaymentFacilitator.js"
import {
  associatedTokenAddress,
  base58,
  type DecodedSolanaPayment,
  decodeSolanaPayment,
  isLighthouse,
  isMemo,
  parseComputeUnitLimit,
  parseComputeUnitPrice,
  parseTransferChecked,
  type TransferChecked
} from "../solana/SolanaPayment.js"
import { SvmReason, verifyEd25519 } from "../solana/SolanaCheck.js"
import type { SimulatedLedger } from "./SimulatedLedger.js"

/*
 * The `exact` SVM scheme as its specification's facilitator rules have it (x402 specs/schemes/exact/
 * scheme_exact_svm.md): compute limit, compute price, TransferChecked, then up to three Lighthouse or Memo
 * instructions. Signatures are really verified (ed25519); the chain is the simulated ledger. Reasons are
 * @x402/svm 2.27's own.
 */

export { SvmReason }

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

/** At most 3 + 3 instructions: the spec's slots 4 and 5 take Lighthouse or Memo, slot 6 a Memo. */
const MAX_INSTRUCTIONS = 6
/** Phantom injects one Lighthouse assertion and Solflare two; the spec has room for no more. */
const MAX_LIGHTHOUSE = 2
const unknownAt = [SvmReason.unknownFourth, SvmReason.unknownFifth, SvmReason.unknownSixth] as const

/**
 * The spec's positional layout: [limit, price, transfer, then Lighthouse or Memo instructions]. Wallets append
 * their Lighthouse assertions after the client's memo, so the slots are read as counts, not fixed places: each
 * optional instruction is Lighthouse or Memo, and no more than two are Lighthouse. With `extra.memo` the
 * transaction carries exactly that one memo.
 */
const layoutProblem = (decoded: DecodedSolanaPayment, expectedMemo: string | undefined): string | TransferChecked => {
  const ixs = decoded.instructions
  if (ixs.length < 3 || ixs.length > MAX_INSTRUCTIONS) return SvmReason.instructionsLength
  if (parseComputeUnitLimit(ixs[0]!) === undefined) return SvmReason.computeLimit
  const price = parseComputeUnitPrice(ixs[1]!)
  if (price === undefined) return SvmReason.computePrice
  if (price > MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS) return SvmReason.computePriceTooHigh
  const transfer = parseTransferChecked(ixs[2]!)
  if (transfer === undefined) return SvmReason.noTransfer
  const optional = ixs.slice(3)
  let lighthouses = 0
  for (const [i, ix] of optional.entries()) {
    if (isLighthouse(ix)) lighthouses += 1
    if (!(isMemo(ix) || (isLighthouse(ix) && lighthouses <= MAX_LIGHTHOUSE))) return unknownAt[i]!
  }
  if (expectedMemo !== undefined && expectedMemo !== "") {
    const memos = optional.filter(isMemo)
    if (memos.length !== 1) return SvmReason.memoCount
    if (new TextDecoder().decode(memos[0]!.data) !== expectedMemo) return SvmReason.memoMismatch
  }
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
    const layout = layoutProblem(decoded, requirement.extra["memo"])
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

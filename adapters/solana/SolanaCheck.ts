import { type Address, getPublicKeyFromAddress, type SignatureBytes, verifySignature } from "@solana/kit"
import { Either } from "effect"
import { associatedTokenAddress, decodeSolanaPayment, paymentTransfer } from "./SolanaPayment.js"

/*
 * The checks of an x402 `exact` SVM payment that need no chain: the transfer authority's ed25519 signature
 * over the message, and the transfer's terms. Shared by the local check every checkout runs before asking a
 * facilitator (Chains.checkPayment) and by the test twin's simulated facilitator. Reasons are @x402/svm 2.27's.
 */

/** The x402 reasons a Solana payment is refused with, as @x402/svm names them. */
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
  unknownFifth: "invalid_exact_svm_payload_unknown_fifth_instruction",
  unknownSixth: "invalid_exact_svm_payload_unknown_sixth_instruction",
  memoCount: "invalid_exact_svm_payload_memo_count",
  memoMismatch: "invalid_exact_svm_payload_memo_mismatch",
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

/** True when `signature` is `address`'s ed25519 signature of `message`; never rejects. */
export const verifyEd25519 = async (address: string, signature: Uint8Array, message: Uint8Array): Promise<boolean> => {
  try {
    const key = await getPublicKeyFromAddress(address as Address)
    return await verifySignature(key, signature as SignatureBytes, message)
  } catch {
    return false
  }
}

/** What an SVM payment must be for (a requirement's or a sale's terms); `extra.feePayer` when named. */
export interface SolanaTerms {
  /** The USDC mint. */
  readonly asset: string
  /** The exact amount, in atomic units. */
  readonly amount: bigint
  /** The owner of the account that must receive it. */
  readonly payTo: string
  /** Scheme extras: `feePayer` when named. */
  readonly extra: Readonly<Record<string, string>>
}

/**
 * The local check of an SVM payload against terms: one TransferChecked of exactly the amount of the terms'
 * mint into the payee's associated token account, its authority not the fee payer and validly signed over the
 * message (and the fee payer the one the terms name, if any). Answers the x402 reason of the first broken rule,
 * with the payer when known; undefined when the payment holds.
 */
export const checkSolana = async (
  payload: unknown,
  terms: SolanaTerms
): Promise<{ readonly reason: string; readonly payer: string | null } | undefined> => {
  const decoded = decodeSolanaPayment(payload)
  if (Either.isLeft(decoded)) return { reason: SvmReason.undecodable, payer: null }
  const expectedFeePayer = terms.extra["feePayer"]
  if (expectedFeePayer && decoded.right.feePayer !== expectedFeePayer) return { reason: SvmReason.feePayerMismatch, payer: null }
  const found = paymentTransfer(decoded.right)
  if (Either.isLeft(found)) {
    return { reason: found.left.includes("sign") ? SvmReason.signature : SvmReason.noTransfer, payer: null }
  }
  const { signature, transfer } = found.right
  const payer = transfer.authority
  if (payer === decoded.right.feePayer) return { reason: SvmReason.feePayerTransferring, payer }
  if (signature === null || !(await verifyEd25519(payer, signature, decoded.right.messageBytes))) {
    return { reason: SvmReason.signature, payer }
  }
  if (transfer.mint !== terms.asset) return { reason: SvmReason.mintMismatch, payer }
  const destination = await associatedTokenAddress(terms.payTo, transfer.mint, transfer.program).catch(() => null)
  if (destination === null || transfer.destination !== destination) return { reason: SvmReason.recipientMismatch, payer }
  if (transfer.amount !== terms.amount) return { reason: SvmReason.amountMismatch, payer }
  return undefined
}

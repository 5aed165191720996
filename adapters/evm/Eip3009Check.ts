import { Either } from "effect"
import { getAddress, type Hex, isAddress } from "viem"
import { type Eip3009Domain, type Eip3009Payment, evmChainId, parseEip3009Payment, verifyEip3009Signature } from "./EvmPayment.js"

/*
 * The checks of an x402 `exact` EVM payment that need no chain: terms, time window and the EIP-712 signature.
 * Shared by the local check every checkout runs before asking a facilitator (Chains.checkPayment) and by the
 * test twin's simulated facilitator. Reason strings are @x402/evm 2.27's own (`invalid_exact_evm_*`).
 */

/** The x402 reasons an EVM payment is refused with, as @x402/evm names them. */
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
export const VALID_BEFORE_MARGIN_SECONDS = 6n

/** What an EIP-3009 payment must be for (a requirement's or a sale's terms). */
export interface Eip3009Terms {
  /** The CAIP-2 network. */
  readonly network: string
  /** The token contract. */
  readonly asset: string
  /** The exact amount, in atomic units. */
  readonly amount: bigint
  /** The address that must receive it. */
  readonly payTo: string
  /** Scheme extras: the token's EIP-712 domain `name` and `version`. */
  readonly extra: Readonly<Record<string, string>>
}

/** The EIP-712 domain of the terms' token, or undefined when the terms do not name one. */
export const domainOf = (terms: Eip3009Terms): Eip3009Domain | undefined => {
  const name = terms.extra["name"]
  const version = terms.extra["version"]
  const chainId = evmChainId(terms.network)
  if (!name || !version || chainId === undefined || !isAddress(terms.asset, { strict: false })) return undefined
  return { name, version, chainId, verifyingContract: getAddress(terms.asset.toLowerCase()) as Hex }
}

/**
 * The first broken rule among those that need no signature check: payee, value, and (when `nowSeconds` is
 * given) the validity window. Undefined when none is broken.
 */
export const eip3009TermsProblem = (payment: Eip3009Payment, terms: Eip3009Terms, nowSeconds: bigint | null): string | undefined => {
  const { authorization } = payment
  if (!isAddress(terms.payTo, { strict: false }) || getAddress(terms.payTo.toLowerCase()) !== authorization.to) {
    return EvmReason.recipientMismatch
  }
  if (authorization.value !== terms.amount) return EvmReason.valueMismatch
  if (nowSeconds !== null) {
    if (authorization.validBefore < nowSeconds + VALID_BEFORE_MARGIN_SECONDS) return EvmReason.validBefore
    if (authorization.validAfter > nowSeconds) return EvmReason.validAfter
  }
  return undefined
}

/*
 * Checking an EIP-712 signature costs ~0.4 ms of CPU (the EIP-712 hash, then libsecp256k1 recovery) and a
 * purchase asks more than once (the local check, then the twin's verify and settle). Whether a signature is
 * valid is a pure function of (domain, authorization, signature), so a verdict already reached in this process
 * is reused. Bounded: the oldest verdicts are dropped first.
 */
const SIGNATURE_MEMO_SIZE = 4096
const signatureMemo = new Map<string, boolean>()

export const signatureValid = (payment: Eip3009Payment, domain: Eip3009Domain): Promise<boolean> => {
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

/**
 * The local check of an EIP-3009 payload against terms: parsed, for the terms, inside its window (when
 * `nowSeconds` is given) and signed by `from` under the token's domain. Answers the x402 reason of the first
 * broken rule, with the payer when it could be read; undefined when the payment holds.
 */
export const checkEip3009 = async (
  payload: unknown,
  terms: Eip3009Terms,
  nowSeconds: bigint | null
): Promise<{ readonly reason: string; readonly payer: string | null } | undefined> => {
  const parsed = parseEip3009Payment(payload)
  if (Either.isLeft(parsed)) return { reason: parsed.left.reason, payer: null }
  const payment = parsed.right
  const payer = payment.authorization.from
  const domain = domainOf(terms)
  if (domain === undefined) return { reason: EvmReason.missingDomain, payer }
  const problem = eip3009TermsProblem(payment, terms, nowSeconds)
  if (problem !== undefined) return { reason: problem, payer }
  return (await signatureValid(payment, domain)) ? undefined : { reason: EvmReason.signature, payer }
}

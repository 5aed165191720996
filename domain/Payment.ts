import type { Option, Redacted } from "effect"
import type { AtomicAmount } from "./Money.js"
import type { Chain } from "./Wallet.js"

/**
 * What a checkout asks to be paid and what a buyer sends: the x402 terms and the submitted payment as the model
 * sees them. The PaymentFacilitator port verifies and settles these; the rules match one against the other.
 */

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

/** What a checkout asks a returning wallet to sign (x402 Sign-In-With-X `info` and `supportedChains`). */
export interface SiwxChallenge {
  /** The host the challenge is for. */
  readonly domain: string
  /** The checkout URL it is bound to. */
  readonly uri: string
  /** The sentence the wallet shows (`SIWX_STATEMENT`). */
  readonly statement: string
  /** The stateless nonce (`mintSiwxNonce`). */
  readonly nonce: string
  /** When it was issued. */
  readonly issuedAt: Date
  /** When it stops being accepted. */
  readonly expiresAt: Date
  /** The networks a paying wallet may sign on. */
  readonly networks: ReadonlyArray<{ readonly chain: Chain; readonly network: string }>
}

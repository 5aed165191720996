import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier"
import { Option } from "effect"
import type { PaymentRequirement, Settlement } from "../ports/PaymentFacilitator.js"
import { BAZAAR_KEY, CHECKOUT_DISCOVERY, GOODS_MIME_TYPE } from "./BazaarDiscovery.js"
import { v1FromCaip2 } from "../domain/ChainFacts.js"

export { GOODS_MIME_TYPE } from "./BazaarDiscovery.js"
export { decodePaymentHeader, MAX_PAYMENT_HEADER_LENGTH, type PaymentHeaders } from "./PaymentHeader.js"

export interface PaymentRequiredOptions {
  /** Absolute URL of the checkout. */
  readonly resource: string
  readonly description: string
  readonly error?: string | undefined
  /** A sentence for people (and agents) on why the payment was refused and what to do; in the v1 body. */
  readonly detail?: string | undefined
  /** x402 v2 extensions the 402 declares (see `CHECKOUT_EXTENSIONS`). */
  readonly extensions?: Readonly<Record<string, unknown>> | undefined
  /**
   * Extensions the v1 body carries too (top-level `extensions`, where x402's `offer-receipt` extension puts its
   * signed offers in x402 v1); also declared in v2.
   */
  readonly v1Extensions?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What every checkout's 402 declares: x402 `payment-identifier`, optional (a buyer who sends an id with its
 * payment recovers that purchase with it: the same id again, with a payment signed by the same payer for the
 * same terms), and the `bazaar` discovery declaration (see `BazaarDiscovery.ts`). Static, so a remembered
 * 402 (the front door) is always right.
 */
export const CHECKOUT_EXTENSIONS: Readonly<Record<string, unknown>> = {
  [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
  [BAZAAR_KEY]: CHECKOUT_DISCOVERY
}

/** One x402 v2 `PaymentRequirements` entry, as it goes on the wire. */
export interface RequirementV2 {
  /** The x402 scheme (`exact`). */
  readonly scheme: string
  /** The CAIP-2 network. */
  readonly network: string
  /** The token contract or mint. */
  readonly asset: string
  /** The amount in atomic units, as a decimal string. */
  readonly amount: string
  /** The payout address. */
  readonly payTo: string
  /** How long the payment may take to settle. */
  readonly maxTimeoutSeconds: number
  /** Scheme extras. */
  readonly extra: Readonly<Record<string, string>>
}

/** An x402 v2 402 body (sent base64 in the `PAYMENT-REQUIRED` header). */
export interface PaymentRequiredV2 {
  /** The protocol version. */
  readonly x402Version: 2
  /** Why payment is required (or why the last one was refused). */
  readonly error: string
  /** The resource being sold. */
  readonly resource: { readonly url: string; readonly description: string; readonly mimeType: string }
  /** The payment options, one per chain. */
  readonly accepts: ReadonlyArray<RequirementV2>
  /** The x402 extensions declared (payment-identifier, bazaar). */
  readonly extensions?: Readonly<Record<string, unknown>>
}

/** One x402 v1 `PaymentRequirements` entry (no `outputSchema`: x402 v1 clients reject a null one). */
export interface RequirementV1 {
  /** The x402 scheme (`exact`). */
  readonly scheme: string
  /** The v1 network name (`base`, `base-sepolia`, `solana`, `solana-devnet`). */
  readonly network: string
  /** The amount in atomic units, as a decimal string. */
  readonly maxAmountRequired: string
  /** The absolute URL of the checkout. */
  readonly resource: string
  /** What is being bought. */
  readonly description: string
  /** The goods' MIME type. */
  readonly mimeType: string
  /** The payout address. */
  readonly payTo: string
  /** How long the payment may take to settle. */
  readonly maxTimeoutSeconds: number
  /** The token contract or mint. */
  readonly asset: string
  /** Scheme extras. */
  readonly extra: Readonly<Record<string, string>>
}

/** An x402 v1 402 body (sent as JSON). */
export interface PaymentRequiredV1 {
  /** The protocol version. */
  readonly x402Version: 1
  /** Why payment is required (or why the last one was refused). */
  readonly error: string
  /** A longer explanation, for people. */
  readonly detail?: string
  /** The payment options, one per chain. */
  readonly accepts: ReadonlyArray<RequirementV1>
  /** The signed offers (`offer-receipt`), where the 402 has them. */
  readonly extensions?: Readonly<Record<string, unknown>>
}

/** A requirement as x402 v2 puts it on the wire. */
export const requirementV2 = (r: PaymentRequirement): RequirementV2 => ({
  scheme: r.scheme,
  network: r.network,
  asset: r.asset,
  amount: r.amount.toString(),
  payTo: r.payTo,
  maxTimeoutSeconds: r.maxTimeoutSeconds,
  extra: { ...r.extra }
})

/** The v1 form of a requirement; resource and description default to the requirement's own. */
export const requirementV1 = (
  r: PaymentRequirement,
  about: { readonly resource: string; readonly description: string } = r
): RequirementV1 => ({
  scheme: r.scheme,
  network: r.v1Network,
  maxAmountRequired: r.amount.toString(),
  resource: about.resource,
  description: about.description,
  mimeType: GOODS_MIME_TYPE,
  payTo: r.payTo,
  maxTimeoutSeconds: r.maxTimeoutSeconds,
  asset: r.asset,
  extra: { ...r.extra }
})

/** The object behind the `PAYMENT-REQUIRED` header of a 402 (x402 v2). */
export const paymentRequiredV2 = (
  requirements: ReadonlyArray<PaymentRequirement>,
  options: PaymentRequiredOptions
): PaymentRequiredV2 => ({
  x402Version: 2,
  error: options.error ?? "PAYMENT-SIGNATURE header is required",
  resource: { url: options.resource, description: options.description, mimeType: GOODS_MIME_TYPE },
  accepts: requirements.map(requirementV2),
  ...(options.extensions === undefined && options.v1Extensions === undefined
    ? {}
    : { extensions: { ...options.extensions, ...options.v1Extensions } })
})

/** The JSON body of a 402, which is what x402 v1 clients (x402-fetch) read. */
export const paymentRequiredV1Body = (
  requirements: ReadonlyArray<PaymentRequirement>,
  options: PaymentRequiredOptions
): PaymentRequiredV1 => ({
  x402Version: 1,
  error: options.error ?? "X-PAYMENT header is required",
  ...(options.detail === undefined ? {} : { detail: options.detail }),
  accepts: requirements.map((r) => requirementV1(r, options)),
  ...(options.v1Extensions === undefined ? {} : { extensions: options.v1Extensions })
})

/** Base64 of the UTF-8 JSON, byte for byte what @x402/core's header encoders produce. */
export const encodeHeader = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64")

/**
 * The settlement receipt header of a paid response: `PAYMENT-RESPONSE` for v2, `X-PAYMENT-RESPONSE` with the
 * v1 network name for v1. Both carry `success`, `transaction`, `network` and `payer` (required in v1, optional
 * in v2); a failed settlement carries an empty transaction and its `errorReason`, as the specs have it.
 * `extensions` (the signed receipt of `offer-receipt`, see `receiptExtension`) go in as given.
 */
export const paymentResponseHeader = (
  settlement: Settlement & { readonly payer: string },
  version: 1 | 2,
  extensions?: Readonly<Record<string, unknown>>
): { readonly name: "PAYMENT-RESPONSE" | "X-PAYMENT-RESPONSE"; readonly value: string } => {
  const network = version === 1
    ? Option.getOrElse(v1FromCaip2(settlement.network), () => settlement.network)
    : settlement.network
  const body = {
    success: settlement.success,
    transaction: settlement.transaction ?? "",
    network,
    payer: settlement.payer,
    ...(settlement.errorReason !== null ? { errorReason: settlement.errorReason } : {}),
    // Left out of the JSON when undefined.
    extensions
  }
  return { name: version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE", value: encodeHeader(body) }
}

import { isValidPaymentId, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier"
import { Either, Option, ParseResult, Redacted, Schema } from "effect"
import type { SubmittedPayment } from "../ports/PaymentFacilitator.js"
import { caip2FromV1 } from "../domain/ChainFacts.js"

/**
 * Largest payment header accepted. An EVM authorization encodes to about 1 KiB and a Solana transaction to
 * about 2 KiB, so this leaves room for extensions while bounding what a stranger can make us parse.
 */
export const MAX_PAYMENT_HEADER_LENGTH = 16 * 1024

/**
 * The request headers a payment can arrive in, names lower-cased as Node and @effect/platform give them;
 * a whole request's headers object may be passed as it is.
 */
export interface PaymentHeaders {
  /** The x402 v2 payment header. */
  readonly "payment-signature"?: string | undefined
  /** The x402 v1 payment header. */
  readonly "x-payment"?: string | undefined
  /** Any other header, ignored. */
  readonly [name: string]: string | undefined
}

// Standard base64 (RFC 4648 §4), padded or not: what @x402/core and x402 v1 clients send.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/

// Leaf schemas carry their own messages so a reason never echoes the buyer's input back.
const message = (text: string) => ({ message: () => text })
const Str = Schema.String.annotations(message("must be a string"))
const NonEmpty = Str.pipe(Schema.minLength(1, message("must not be empty")))
const Atomic = Str.pipe(Schema.pattern(/^[0-9]{1,78}$/, message("must be a whole number of atomic units as a string")))
const Caip2 = Str.pipe(Schema.pattern(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, message("must be a CAIP-2 network id")))
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations(message("must be an object"))
const Seconds = Schema.Number.annotations(message("must be a number")).pipe(Schema.positive(message("must be positive")))

const AcceptedV2 = Schema.Struct({
  scheme: NonEmpty,
  network: Caip2,
  asset: NonEmpty,
  amount: Atomic,
  payTo: NonEmpty,
  maxTimeoutSeconds: Seconds,
  extra: Schema.optional(Schema.NullOr(JsonObject))
})

const PayloadV2 = Schema.Struct({
  x402Version: Schema.Literal(2).annotations(message("must be 2 in PAYMENT-SIGNATURE")),
  resource: Schema.optional(Schema.NullOr(JsonObject)),
  accepted: AcceptedV2.annotations(message("must be an object")),
  payload: JsonObject
})

const PayloadV1 = Schema.Struct({
  x402Version: Schema.Literal(1).annotations(message("must be 1 in X-PAYMENT")),
  scheme: NonEmpty,
  network: NonEmpty,
  payload: JsonObject
})

const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (issue === undefined) return "invalid payment"
  const where = issue.path.length > 0 ? issue.path.join(".") : "payment"
  return `${where} ${issue._tag === "Missing" ? "is missing" : issue.message}`
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Either.Either<A, string> =>
  Schema.decodeUnknownEither(schema, { errors: "first" })(value).pipe(Either.mapLeft(firstIssue))

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Base64 → UTF-8 → JSON object, each step bounded and checked; never throws. */
export const decodeBase64Json = (name: string, header: string): Either.Either<Record<string, unknown>, string> => {
  if (header.length === 0) return Either.left(`${name} is empty`)
  if (header.length > MAX_PAYMENT_HEADER_LENGTH) return Either.left(`${name} is larger than ${MAX_PAYMENT_HEADER_LENGTH} bytes`)
  if (!BASE64.test(header)) return Either.left(`${name} is not base64`)
  let parsed: unknown
  try {
    parsed = JSON.parse(utf8.decode(Buffer.from(header, "base64")))
  } catch {
    return Either.left(`${name} is not base64-encoded UTF-8 JSON`)
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? Either.right(parsed as Record<string, unknown>)
    : Either.left(`${name} is not a JSON object`)
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The buyer's x402 `payment-identifier` id, if the payment carries one (`extensions["payment-identifier"].info.id`).
 * A declaration echoed without an id (as the official client sends it) is no id. The format is checked with
 * @x402/extensions' own rule; its `validatePaymentIdentifier` is not used because it compiles the JSON Schema
 * the payment carries, which a stranger writes. A malformed id is never echoed back.
 */
const paymentIdOf = (raw: Record<string, unknown>): Either.Either<Option.Option<Redacted.Redacted<string>>, string> => {
  const extensions = raw["extensions"]
  if (extensions === undefined || extensions === null) return Either.right(Option.none())
  if (!isRecord(extensions)) return Either.left("extensions must be an object")
  const extension = extensions[PAYMENT_IDENTIFIER]
  if (extension === undefined) return Either.right(Option.none())
  if (!isRecord(extension) || !isRecord(extension["info"])) {
    return Either.left(`extensions.${PAYMENT_IDENTIFIER} must be an object with an info object`)
  }
  const id = extension["info"]["id"]
  if (id === undefined) return Either.right(Option.none())
  return typeof id === "string" && isValidPaymentId(id)
    ? Either.right(Option.some(Redacted.make(id)))
    : Either.left(`extensions.${PAYMENT_IDENTIFIER}.info.id must be 16 to 128 characters of A-Z, a-z, 0-9, "_" and "-"`)
}

/** The header object without the payment-identifier extension: the buyer's id is not the facilitator's business. */
const withoutPaymentId = (raw: Record<string, unknown>): Record<string, unknown> => {
  const extensions = raw["extensions"]
  if (!isRecord(extensions) || !(PAYMENT_IDENTIFIER in extensions)) return raw
  const { [PAYMENT_IDENTIFIER]: _, ...others } = extensions
  const { extensions: __, ...rest } = raw
  return Object.keys(others).length === 0 ? rest : { ...rest, extensions: others }
}

const fromV2 = (raw: Record<string, unknown>): Either.Either<SubmittedPayment, string> =>
  Either.flatMap(decodeWith(PayloadV2, raw), (p) => Either.map(paymentIdOf(raw), (paymentId) => ({
    x402Version: 2 as const,
    scheme: p.accepted.scheme,
    network: p.accepted.network,
    accepted: Option.some({
      scheme: p.accepted.scheme,
      network: p.accepted.network,
      asset: p.accepted.asset,
      amount: p.accepted.amount,
      payTo: p.accepted.payTo
    }),
    payload: p.payload,
    paymentId: Option.getOrUndefined(paymentId),
    raw: withoutPaymentId(raw)
  })))

const fromV1 = (raw: Record<string, unknown>): Either.Either<SubmittedPayment, string> =>
  Either.map(decodeWith(PayloadV1, raw), (p) => ({
    x402Version: 1 as const,
    scheme: p.scheme,
    // A v1 name we do not sell on stays as it is: without a colon it can never equal a CAIP-2 requirement,
    // so the purchase refuses it with 402 (a well-formed payment for the wrong network), not 400.
    network: Option.getOrElse(caip2FromV1(p.network), () => p.network),
    accepted: Option.none(),
    payload: p.payload,
    raw
  }))

/**
 * Reads the buyer's payment: x402 v2 from `PAYMENT-SIGNATURE`, else v1 from `X-PAYMENT` (v1 network names
 * mapped to CAIP-2). Left is a short reason for a 400: the payment is malformed, not merely unacceptable.
 * Whether it matches a requirement, and whether its signature holds, is for the purchase and the facilitator.
 */
export const decodePaymentHeader = (headers: PaymentHeaders): Either.Either<SubmittedPayment, string> => {
  const v2 = headers["payment-signature"]
  if (v2 !== undefined) return Either.flatMap(decodeBase64Json("PAYMENT-SIGNATURE", v2), fromV2)
  const v1 = headers["x-payment"]
  if (v1 !== undefined) return Either.flatMap(decodeBase64Json("X-PAYMENT", v1), fromV1)
  return Either.left("no PAYMENT-SIGNATURE or X-PAYMENT header")
}

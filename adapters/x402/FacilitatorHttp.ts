import { FacilitatorResponseError, FacilitatorTimeoutError, HTTPFacilitatorClient } from "@x402/core/http"
import type { SupportedResponse } from "@x402/core/types"
import { Config, ConfigError, Effect, Either, Option, Ref } from "effect"
import {
  type Facilitator,
  FacilitatorError,
  type PaymentRequirement,
  type Settlement,
  type SubmittedPayment,
  type Verification
} from "../../ports/PaymentFacilitator.js"
import { withOurDiscovery } from "../../codec/BazaarDiscovery.js"
import { type JsonAnswer, makeJsonPoster, type NoAnswer } from "./JsonPost.js"
import { SOLANA_MAINNET } from "./Networks.js"
import { requirementV1, requirementV2 } from "../../codec/Wire.js"

/** How long each facilitator call may take. A settle that times out is indeterminate: money may have moved. */
export const VERIFY_TIMEOUT_MS = 10_000
export const SETTLE_TIMEOUT_MS = 30_000
export const SUPPORTED_TIMEOUT_MS = 10_000

/** How long each call to an HTTP facilitator may take. */
export interface FacilitatorHttpTimeouts {
  /** `/verify`. */
  readonly verifyMs: number
  /** `/settle`; past it, the outcome is unknown. */
  readonly settleMs: number
  /** `/supported`. */
  readonly supportedMs: number
}

const DEFAULT_TIMEOUTS: FacilitatorHttpTimeouts = {
  verifyMs: VERIFY_TIMEOUT_MS,
  settleMs: SETTLE_TIMEOUT_MS,
  supportedMs: SUPPORTED_TIMEOUT_MS
}

/** A real x402 facilitator over HTTP. */
export interface FacilitatorHttp {
  /** Verifies and settles through the facilitator's HTTP API. */
  readonly facilitator: Facilitator
  /**
   * The fee payer the facilitator names for `exact` on Solana mainnet (`kinds[].extra.feePayer` of
   * `/supported`), which live Solana requirements must carry. Read on first use and kept once read.
   */
  readonly solanaFeePayer: Effect.Effect<Option.Option<string>, FacilitatorError>
}

type Operation = "verify" | "settle" | "supported"

// Messages name the operation only: never the URL (it may hold credentials) nor the response body.
const noAnswer = (operation: Operation, timeoutMs: number) => (reason: NoAnswer): FacilitatorError =>
  reason === "timeout"
    ? new FacilitatorError({ reason: "timeout", message: `facilitator ${operation} gave no answer within ${timeoutMs} ms` })
    : reason === "too_large"
    ? new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} answered with more data than a ${operation} answer holds` })
    : new FacilitatorError({ reason: "unreachable", message: `facilitator ${operation}: could not connect` })

const malformed = (operation: Operation) =>
  new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} answered with malformed data` })

const failedWith = (operation: Operation, status: number) =>
  new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} failed with status ${status}` })

/** `/supported` still goes through @x402/core's client (read once per process, with its 429 retries). */
const supportedError = (error: unknown): FacilitatorError => {
  if (error instanceof FacilitatorTimeoutError) return noAnswer("supported", error.timeoutMs)("timeout")
  if (error instanceof FacilitatorResponseError) return malformed("supported")
  // fetch rejects with a TypeError when no HTTP answer came at all (DNS, refused connection, TLS).
  if (error instanceof TypeError) return noAnswer("supported", 0)("unreachable")
  return new FacilitatorError({ reason: "bad_response", message: "facilitator supported failed with an error status" })
}

/**
 * The v1 payload goes out as received with v1 requirements; v2 with v2 requirements (amount as a string) and
 * our checkout's resource and `bazaar` declaration in place of whatever the buyer echoed (`withOurDiscovery`).
 */
const wireBody = (payment: SubmittedPayment, requirement: PaymentRequirement): string =>
  JSON.stringify({
    x402Version: payment.x402Version,
    // A v1 payload is sent in its own v1 shape, as the v1 facilitator API wants.
    paymentPayload: payment.x402Version === 1
      ? payment.raw
      : withOurDiscovery(payment.raw, { url: requirement.resource, description: requirement.description }),
    paymentRequirements: payment.x402Version === 1 ? requirementV1(requirement) : requirementV2(requirement)
  })

interface VerifyAnswer {
  readonly isValid: boolean
  readonly invalidReason: string | undefined
  readonly payer: string | undefined
}

interface SettleAnswer {
  readonly success: boolean
  readonly errorReason: string | undefined
  readonly payer: string | undefined
  readonly transaction: string
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A string field that may be absent or null (x402's answers use both); anything else is malformed. */
const optionalString = (u: unknown): string | undefined | false =>
  u === undefined || u === null ? undefined : typeof u === "string" ? u : false

/** x402's verify answer (`isValid`, optional `invalidReason` and `payer`), or null when it is not one. */
const readVerify = (body: unknown): VerifyAnswer | null => {
  if (!isObject(body) || typeof body["isValid"] !== "boolean") return null
  const invalidReason = optionalString(body["invalidReason"])
  const payer = optionalString(body["payer"])
  if (invalidReason === false || payer === false) return null
  return { isValid: body["isValid"], invalidReason, payer }
}

/** x402's settle answer (`success`, `transaction`, `network`, optional `errorReason` and `payer`), or null. */
const readSettle = (body: unknown): SettleAnswer | null => {
  if (!isObject(body) || typeof body["success"] !== "boolean" || typeof body["transaction"] !== "string" || typeof body["network"] !== "string") return null
  const errorReason = optionalString(body["errorReason"])
  const payer = optionalString(body["payer"])
  if (errorReason === false || payer === false) return null
  return { success: body["success"], transaction: body["transaction"], errorReason, payer }
}

/**
 * An answer of x402's facilitator API: a 2xx must carry the operation's answer; a 4xx carrying one (a field
 * named `key` present) is the facilitator's refusal, i.e. an answer too; a 5xx or anything else is not.
 */
const answerOf = <A>(operation: Operation, key: string, read: (body: unknown) => A | null, refusal: (body: Record<string, unknown>) => A) =>
(answer: JsonAnswer): Effect.Effect<A, FacilitatorError> => {
  if (answer.status >= 200 && answer.status < 300) {
    const read_ = read(answer.body)
    return read_ === null ? Effect.fail(malformed(operation)) : Effect.succeed(read_)
  }
  if (answer.status >= 400 && answer.status < 500 && isObject(answer.body) && key in answer.body) {
    return Effect.succeed(refusal(answer.body))
  }
  return Effect.fail(failedWith(operation, answer.status))
}

const stringOr = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const verification = (r: VerifyAnswer): Verification => ({
  valid: r.isValid,
  invalidReason: r.isValid ? null : r.invalidReason ?? "invalid_payment",
  payer: r.payer ?? null
})

const settlement = (requirement: PaymentRequirement, r: SettleAnswer): Settlement => ({
  success: r.success,
  transaction: r.transaction === "" ? null : r.transaction,
  // The network we asked to settle on; a v1 facilitator answers with the v1 name of the same network.
  network: requirement.network,
  payer: r.payer ?? null,
  errorReason: r.success ? null : r.errorReason ?? "settle_failed"
})

const feePayerOf = (supported: SupportedResponse): Option.Option<string> => {
  const candidates = supported.kinds
    .filter((k) => k.scheme === "exact" && (k.network === SOLANA_MAINNET.network || k.network === SOLANA_MAINNET.v1Network))
    .sort((a, b) => b.x402Version - a.x402Version)
  for (const kind of candidates) {
    const feePayer = kind.extra?.["feePayer"]
    if (typeof feePayer === "string" && feePayer.length > 0) return Option.some(feePayer)
  }
  return Option.none()
}

/** A live facilitator over x402's facilitator HTTP API (`POST /verify`, `POST /settle`, `GET /supported`). */
export const makeFacilitatorHttp = (
  url: string,
  timeouts: Partial<FacilitatorHttpTimeouts> = {}
): Effect.Effect<FacilitatorHttp> =>
  Effect.gen(function*() {
    const t = { ...DEFAULT_TIMEOUTS, ...timeouts }
    const base = url.replace(/\/+$/, "")
    const { post } = makeJsonPoster()
    // `/supported` is read rarely (once per process, when a Solana offer is first made): @x402/core's client.
    const reader = new HTTPFacilitatorClient({ url, timeoutMs: t.supportedMs })
    const ask = (operation: "verify" | "settle", timeoutMs: number, payment: SubmittedPayment, requirement: PaymentRequirement) =>
      // A verify may be sent twice (it moves nothing). A settle never is: should the facilitator have received
      // the first copy, the second is refused while the first one's transfer may still be on its way, and a
      // refusal the chain does not (yet) contradict fails the sale, whose money would then move all the same.
      // A settle without an answer stays pending instead.
      post(`${base}/${operation}`, wireBody(payment, requirement), timeoutMs, { resendOnReset: operation === "verify" }).pipe(
        Effect.mapError(noAnswer(operation, timeoutMs)),
        Effect.withSpan(`FacilitatorHttp.${operation}`)
      )

    const facilitator: Facilitator = {
      verify: (payment, requirement) =>
        ask("verify", t.verifyMs, payment, requirement).pipe(
          Effect.flatMap(answerOf("verify", "isValid", readVerify, (body) => ({
            isValid: false,
            invalidReason: stringOr(body["invalidReason"]),
            payer: stringOr(body["payer"])
          }))),
          Effect.map(verification)
        ),
      settle: (payment, requirement) =>
        ask("settle", t.settleMs, payment, requirement).pipe(
          Effect.flatMap(answerOf("settle", "success", readSettle, (body) => ({
            success: false,
            errorReason: stringOr(body["errorReason"]),
            payer: stringOr(body["payer"]),
            // A refusal may still name the transaction the facilitator broadcast (x402's `SettleError` carries
            // it): kept, so that the purchase knows the money may be on its way.
            transaction: stringOr(body["transaction"]) ?? ""
          }))),
          Effect.flatMap((r) => r.success && r.transaction === ""
            ? Effect.fail(new FacilitatorError({ reason: "bad_response", message: "facilitator settle succeeded without a transaction" }))
            : Effect.succeed(settlement(requirement, r)))
        ),
      // x402's facilitator API has no status call: the chain itself is asked (see the chain readers).
      status: () => Effect.succeed({ _tag: "Unknown", reason: "no chain reader configured" } as const)
    }

    const cached = yield* Ref.make(Option.none<Option.Option<string>>())
    const lock = yield* Effect.makeSemaphore(1)
    const fetchFeePayer = Effect.tryPromise({ try: () => reader.getSupported(), catch: supportedError }).pipe(
      Effect.withSpan("FacilitatorHttp.supported"),
      Effect.map(feePayerOf),
      Effect.tap((feePayer) => Ref.set(cached, Option.some(feePayer)))
    )
    // Only an answer is kept: a failed read is tried again by the next checkout.
    const solanaFeePayer = lock.withPermits(1)(
      Effect.flatMap(Ref.get(cached), Option.match({ onNone: () => fetchFeePayer, onSome: Effect.succeed }))
    )

    return { facilitator, solanaFeePayer }
  })

// The value is not repeated in the message: a malformed URL may still hold a credential.
const invalidUrl = ConfigError.InvalidData(
  ["X402_FACILITATOR_URL"],
  "must be an absolute http(s) URL without credentials, query or fragment"
)

const checkUrl = (raw: string): Either.Either<string, ConfigError.ConfigError> => {
  if (!URL.canParse(raw)) return Either.left(invalidUrl)
  const u = new URL(raw)
  const ok = (u.protocol === "https:" || u.protocol === "http:") && u.username === "" && u.password === "" &&
    u.search === "" && u.hash === ""
  return ok ? Either.right(raw) : Either.left(invalidUrl)
}

/** `X402_FACILITATOR_URL`, unset or blank meaning no live facilitator; a malformed one fails start-up. */
export const FacilitatorUrl: Config.Config<Option.Option<string>> = Config.option(
  Config.string("X402_FACILITATOR_URL").pipe(
    Config.map((s) => s.trim()),
    Config.mapOrFail((s) => (s === "" ? Either.right(Option.none()) : Either.map(checkUrl(s), Option.some)))
  )
).pipe(Config.map(Option.flatten))

/**
 * `X402_FACILITATOR_TIMEOUT_MS`: one limit for every facilitator call in place of the defaults above (verify
 * 10 s, settle 30 s); unset keeps them. For facilitators known to be slower or faster, and for tests.
 */
export const FacilitatorTimeoutMs: Config.Config<Option.Option<number>> = Config.option(
  Config.integer("X402_FACILITATOR_TIMEOUT_MS").pipe(
    Config.validate({ message: "must be a whole number of milliseconds from 1 to 600000", validation: (ms) => ms >= 1 && ms <= 600_000 })
  )
)

/** The live facilitator the operator configured, if any. */
export const facilitatorHttpFromConfig: Effect.Effect<Option.Option<FacilitatorHttp>, ConfigError.ConfigError> = Effect.flatMap(
  Config.all([FacilitatorUrl, FacilitatorTimeoutMs]),
  ([url, timeoutMs]) =>
    Option.match(url, {
      onNone: () => Effect.succeedNone,
      onSome: (u) => {
        const timeouts = Option.match(timeoutMs, {
          onNone: () => ({}),
          onSome: (ms) => ({ verifyMs: ms, settleMs: ms, supportedMs: ms })
        })
        return Effect.map(makeFacilitatorHttp(u, timeouts), Option.some)
      }
    })
)

import { FacilitatorResponseError, FacilitatorTimeoutError, HTTPFacilitatorClient } from "@x402/core/http"
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SupportedResponse,
  VerifyError
} from "@x402/core/types"
import { Config, ConfigError, Effect, Either, Option, Ref } from "effect"
import {
  type Facilitator,
  FacilitatorError,
  type PaymentRequirement,
  type Settlement,
  type SubmittedPayment,
  type Verification
} from "../../ports/PaymentFacilitator.js"
import { withOurDiscovery } from "./BazaarDiscovery.js"
import { SOLANA_MAINNET } from "./Networks.js"
import { requirementV1, requirementV2 } from "./Wire.js"

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
const toFacilitatorError = (operation: Operation, error: unknown): FacilitatorError => {
  if (error instanceof FacilitatorTimeoutError) {
    return new FacilitatorError({ reason: "timeout", message: `facilitator ${operation} gave no answer within ${error.timeoutMs} ms` })
  }
  if (error instanceof FacilitatorResponseError) {
    return new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} answered with malformed data` })
  }
  // fetch rejects with a TypeError when no HTTP answer came at all (DNS, refused connection, TLS).
  if (error instanceof TypeError) {
    return new FacilitatorError({ reason: "unreachable", message: `facilitator ${operation}: could not connect` })
  }
  if (error instanceof VerifyError || error instanceof SettleError) {
    return new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} failed with status ${error.statusCode}` })
  }
  return new FacilitatorError({ reason: "bad_response", message: `facilitator ${operation} failed with an error status` })
}

const call = <A>(operation: Operation, run: () => Promise<A>): Effect.Effect<A, unknown> =>
  Effect.tryPromise({ try: run, catch: (error) => error }).pipe(Effect.withSpan(`FacilitatorHttp.${operation}`))

/**
 * The v1 payload goes out as received with v1 requirements; v2 with v2 requirements (amount as a string) and
 * our checkout's resource and `bazaar` declaration in place of whatever the buyer echoed (`withOurDiscovery`).
 */
const wireArgs = (payment: SubmittedPayment, requirement: PaymentRequirement): [PaymentPayload, PaymentRequirements] => [
  // The client only serialises these; a v1 payload is sent in its own v1 shape, as the v1 facilitator API wants.
  (payment.x402Version === 1
    ? payment.raw
    : withOurDiscovery(payment.raw, { url: requirement.resource, description: requirement.description })) as PaymentPayload,
  (payment.x402Version === 1 ? requirementV1(requirement) : requirementV2(requirement)) as unknown as PaymentRequirements
]

interface VerifyAnswer {
  readonly isValid: boolean
  readonly invalidReason?: string | undefined
  readonly payer?: string | undefined
}

interface SettleAnswer {
  readonly success: boolean
  readonly errorReason?: string | undefined
  readonly payer?: string | undefined
  readonly transaction: string
}

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

// A 4xx that still carries a verify/settle body is the facilitator's refusal, i.e. an answer; a 5xx is not.
const isRefusal = (error: unknown): error is VerifyError | SettleError =>
  (error instanceof VerifyError || error instanceof SettleError) && error.statusCode >= 400 && error.statusCode < 500

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
    // One client per operation: @x402/core's client has a single timeout, and ours differ per call.
    const verifier = new HTTPFacilitatorClient({ url, timeoutMs: t.verifyMs })
    const settler = new HTTPFacilitatorClient({ url, timeoutMs: t.settleMs })
    const reader = new HTTPFacilitatorClient({ url, timeoutMs: t.supportedMs })

    const facilitator: Facilitator = {
      verify: (payment, requirement) =>
        call("verify", () => verifier.verify(...wireArgs(payment, requirement))).pipe(
          Effect.map(verification),
          Effect.catchAll((e) => isRefusal(e) && e instanceof VerifyError
            ? Effect.succeed(verification({ isValid: false, invalidReason: e.invalidReason, payer: e.payer }))
            : Effect.fail(toFacilitatorError("verify", e)))
        ),
      settle: (payment, requirement) =>
        call("settle", () => settler.settle(...wireArgs(payment, requirement))).pipe(
          Effect.catchAll((e) => isRefusal(e) && e instanceof SettleError
            ? Effect.succeed<SettleAnswer>({ success: false, errorReason: e.errorReason, payer: e.payer, transaction: "" })
            : Effect.fail(toFacilitatorError("settle", e))),
          Effect.flatMap((r) => r.success && r.transaction === ""
            ? Effect.fail(new FacilitatorError({ reason: "bad_response", message: "facilitator settle succeeded without a transaction" }))
            : Effect.succeed(settlement(requirement, r)))
        ),
      // x402's facilitator API has no status call: the chain itself is asked (see the chain readers).
      status: () => Effect.succeed({ _tag: "Unknown", reason: "no chain reader configured" } as const)
    }

    const cached = yield* Ref.make(Option.none<Option.Option<string>>())
    const lock = yield* Effect.makeSemaphore(1)
    const fetchFeePayer = call("supported", () => reader.getSupported()).pipe(
      Effect.mapError((e) => toFacilitatorError("supported", e)),
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

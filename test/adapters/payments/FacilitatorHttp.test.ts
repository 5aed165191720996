/*
 * The live facilitator client (adapters/x402/FacilitatorHttp.ts) reading answers of x402's facilitator API
 * (`POST /verify` → { isValid, invalidReason?, payer? }, `POST /settle` → { success, errorReason?, payer?,
 * transaction, network }, `GET /supported` → { kinds, extensions, signers }) that are wrong in one way each.
 * What is at stake: a settle answer read as "settled" sends the goods; one read as "refused" fails a sale
 * whose money may have moved; neither may come from anything but a well-formed answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Tracer } from "effect"
import { delay, http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { CHECKOUT_DISCOVERY, serviceMetadata } from "../../../codec/BazaarDiscovery.js"
import {
  facilitatorHttpFromConfig,
  FacilitatorTimeoutMs,
  FacilitatorUrl,
  makeFacilitatorHttp
} from "../../../adapters/x402/FacilitatorHttp.js"
import { decodePaymentHeader } from "../../../codec/Wire.js"
import type { SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import { b64, baseSepolia, SOLANA_FEE_PAYER, specPayloadV1, specPayloadV2 } from "../x402/fixtures.js"

const URL_ = "https://facilitator.test/x402"
const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const PAYER = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
const TX = "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"
const NETWORK = "eip155:84532"
const paymentV2: SubmittedPayment = Either.getOrThrow(decodePaymentHeader({ "payment-signature": b64(specPayloadV2()) }))
const paymentV1: SubmittedPayment = Either.getOrThrow(decodePaymentHeader({ "x-payment": b64(specPayloadV1()) }))

/** Answers POST `path` with `status` and the JSON `body`; records each request body. */
const answer = (path: "verify" | "settle", body: unknown, status = 200) => {
  const bodies: Array<unknown> = []
  server.use(http.post(`${URL_}/${path}`, async ({ request }) => {
    bodies.push(await request.json())
    return HttpResponse.json(body as never, { status })
  }))
  return bodies
}

const facilitator = (timeouts = {}, url = URL_) => Effect.map(makeFacilitatorHttp(url, timeouts), (f) => f.facilitator)
const settle = (body: unknown, status = 200) =>
  Effect.gen(function*() {
    answer("settle", body, status)
    return yield* Effect.either((yield* facilitator()).settle(paymentV2, baseSepolia))
  })
const verify = (body: unknown, status = 200) =>
  Effect.gen(function*() {
    answer("verify", body, status)
    return yield* Effect.either((yield* facilitator()).verify(paymentV2, baseSepolia))
  })

const settled = { success: true, transaction: TX, network: NETWORK, payer: PAYER }
const malformedSettle = Either.left(expect.objectContaining({ reason: "bad_response", message: "facilitator settle answered with malformed data" }))
const malformedVerify = Either.left(expect.objectContaining({ reason: "bad_response", message: "facilitator verify answered with malformed data" }))

describe("settle: only a boolean success with a transaction and a network is an answer", () => {
  it.effect("\"success\":\"false\" is not a failed settlement nor \"success\":\"true\" a settled one: malformed, the outcome unknown", () =>
    Effect.gen(function*() {
      for (const success of ["false", "true", 1, 0, null]) {
        expect(yield* settle({ ...settled, success }), String(success)).toEqual(malformedSettle)
      }
      expect(yield* settle({ transaction: TX, network: NETWORK })).toEqual(malformedSettle)
    }))

  it.effect("a settled answer without a transaction string, or without a network string, is malformed", () =>
    Effect.gen(function*() {
      expect(yield* settle({ success: true, network: NETWORK })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, transaction: 42 })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, transaction: null })).toEqual(malformedSettle)
      expect(yield* settle({ success: true, transaction: TX })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, network: 8453 })).toEqual(malformedSettle)
    }))

  it.effect("a payer or errorReason that is not a string is malformed; absent or null they are none", () =>
    Effect.gen(function*() {
      expect(yield* settle({ ...settled, payer: 42 })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, payer: { address: PAYER } })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, errorReason: false })).toEqual(malformedSettle)
      expect(yield* settle({ ...settled, errorReason: ["x"] })).toEqual(malformedSettle)
      expect(yield* settle({ success: true, transaction: TX, network: NETWORK })).toEqual(Either.right({
        success: true,
        transaction: TX,
        network: NETWORK,
        payer: null,
        errorReason: null
      }))
      expect(yield* settle({ ...settled, payer: null, errorReason: null })).toEqual(Either.right({
        success: true,
        transaction: TX,
        network: NETWORK,
        payer: null,
        errorReason: null
      }))
    }))

  it.effect("a body that is not an object is malformed", () =>
    Effect.gen(function*() {
      for (const body of [null, [settled], "settled", true]) expect(yield* settle(body), JSON.stringify(body)).toEqual(malformedSettle)
    }))

  it.effect("a success with an empty transaction is no settlement: bad_response, the outcome unknown", () =>
    Effect.gen(function*() {
      expect(yield* settle({ ...settled, transaction: "" })).toEqual(Either.left(expect.objectContaining({
        reason: "bad_response",
        message: "facilitator settle succeeded without a transaction"
      })))
    }))

  it.effect("a failed settlement: its reason (or settle_failed), no transaction for an empty one, the hash of a failed one kept", () =>
    Effect.gen(function*() {
      expect(yield* settle({ success: false, errorReason: "insufficient_funds", transaction: "", network: NETWORK, payer: PAYER }))
        .toEqual(Either.right({ success: false, transaction: null, network: NETWORK, payer: PAYER, errorReason: "insufficient_funds" }))
      expect(yield* settle({ success: false, transaction: "", network: NETWORK }))
        .toEqual(Either.right({ success: false, transaction: null, network: NETWORK, payer: null, errorReason: "settle_failed" }))
      // A transaction that landed and reverted: the facilitator names it, and so does the settlement.
      expect(yield* settle({ success: false, errorReason: "transaction_failed", transaction: TX, network: NETWORK }))
        .toEqual(Either.right({ success: false, transaction: TX, network: NETWORK, payer: null, errorReason: "transaction_failed" }))
    }))

  it.effect("a settled answer's errorReason is dropped; the network is the one asked for, not the one answered", () =>
    Effect.gen(function*() {
      expect(yield* settle({ ...settled, errorReason: "ignored", network: "base-sepolia" }))
        .toEqual(Either.right({ success: true, transaction: TX, network: NETWORK, payer: PAYER, errorReason: null }))
    }))
})

describe("settle: which statuses are answers", () => {
  it.effect("a 5xx carrying a refusal is not a refusal: FacilitatorError (money may have moved), never a failed settlement", () =>
    Effect.gen(function*() {
      for (const status of [500, 502, 503, 504, 599]) {
        expect(yield* settle({ success: false, errorReason: "unexpected_settle_error", transaction: "", network: NETWORK }, status), String(status))
          .toEqual(Either.left(expect.objectContaining({ _tag: "FacilitatorError", reason: "bad_response", message: `facilitator settle failed with status ${status}` })))
      }
      // Nor a 5xx that claims success.
      expect(yield* settle(settled, 500)).toEqual(Either.left(expect.objectContaining({ message: "facilitator settle failed with status 500" })))
    }))

  it.effect("a 4xx carrying success is the facilitator's refusal, read whatever else it holds", () =>
    Effect.gen(function*() {
      for (const status of [400, 402, 409, 422, 499]) {
        expect(yield* settle({ success: false, errorReason: "invalid_transaction_state" }, status), String(status))
          .toEqual(Either.right({ success: false, transaction: null, network: NETWORK, payer: null, errorReason: "invalid_transaction_state" }))
      }
      // Even one claiming success is a refusal: a 4xx never settles. The transaction it names is kept (a refusal
      // naming a broadcast transaction leaves the sale pending, for the chain to decide).
      expect(yield* settle({ ...settled, errorReason: "nope" }, 400))
        .toEqual(Either.right({ success: false, transaction: settled.transaction, network: NETWORK, payer: PAYER, errorReason: "nope" }))
      expect(yield* settle({ success: false, errorReason: "settlement_pending", transaction: 7 }, 400))
        .toEqual(Either.right({ success: false, transaction: null, network: NETWORK, payer: null, errorReason: "settlement_pending" }))
      // Fields of the wrong type are left out of a refusal.
      expect(yield* settle({ success: "false", errorReason: 7, payer: 7 }, 400))
        .toEqual(Either.right({ success: false, transaction: null, network: NETWORK, payer: null, errorReason: "settle_failed" }))
    }))

  it.effect("a 4xx without success (a verify answer, an error page, no JSON object) is no answer", () =>
    Effect.gen(function*() {
      for (const [body, status] of [[{ isValid: false }, 400], [{ error: "Invalid request" }, 400], [[{ success: false }], 400], ["success", 404], [null, 429]] as const) {
        expect(yield* settle(body, status), `${status} ${JSON.stringify(body)}`)
          .toEqual(Either.left(expect.objectContaining({ reason: "bad_response", message: `facilitator settle failed with status ${status}` })))
      }
    }))

  it.effect("a 2xx other than 200 is read as an answer; a 3xx other than 307/308 is none", () =>
    Effect.gen(function*() {
      expect(yield* settle(settled, 201)).toEqual(Either.right({ success: true, transaction: TX, network: NETWORK, payer: PAYER, errorReason: null }))
      expect(yield* settle(settled, 299)).toMatchObject(Either.right({ success: true }))
      for (const status of [300, 304, 399]) {
        expect(yield* settle(settled, status), String(status))
          .toEqual(Either.left(expect.objectContaining({ message: `facilitator settle failed with status ${status}` })))
      }
    }))
})

describe("verify: only a boolean isValid is an answer", () => {
  it.effect("\"isValid\":\"true\" is malformed, not valid", () =>
    Effect.gen(function*() {
      for (const isValid of ["true", "false", 1, null]) expect(yield* verify({ isValid, payer: PAYER }), String(isValid)).toEqual(malformedVerify)
      expect(yield* verify({ payer: PAYER })).toEqual(malformedVerify)
      for (const body of [null, [{ isValid: true }], "valid"]) expect(yield* verify(body), JSON.stringify(body)).toEqual(malformedVerify)
    }))

  it.effect("an invalidReason or payer that is not a string is malformed; absent or null they are none", () =>
    Effect.gen(function*() {
      expect(yield* verify({ isValid: false, invalidReason: 42 })).toEqual(malformedVerify)
      expect(yield* verify({ isValid: true, payer: 42 })).toEqual(malformedVerify)
      expect(yield* verify({ isValid: true })).toEqual(Either.right({ valid: true, invalidReason: null, payer: null }))
      expect(yield* verify({ isValid: false, invalidReason: null })).toEqual(Either.right({ valid: false, invalidReason: "invalid_payment", payer: null }))
      // A valid answer's reason is dropped.
      expect(yield* verify({ isValid: true, invalidReason: "ignored", payer: PAYER })).toEqual(Either.right({ valid: true, invalidReason: null, payer: PAYER }))
    }))

  it.effect("a 4xx carrying isValid is a refusal, even one claiming valid; a 5xx is no answer; a 4xx without isValid neither", () =>
    Effect.gen(function*() {
      expect(yield* verify({ isValid: true, payer: PAYER }, 400)).toEqual(Either.right({ valid: false, invalidReason: "invalid_payment", payer: PAYER }))
      expect(yield* verify({ isValid: false, invalidReason: "invalid_exact_evm_signature", payer: 1 }, 403))
        .toEqual(Either.right({ valid: false, invalidReason: "invalid_exact_evm_signature", payer: null }))
      expect(yield* verify({ isValid: false, invalidReason: "unexpected_verify_error" }, 500))
        .toEqual(Either.left(expect.objectContaining({ reason: "bad_response", message: "facilitator verify failed with status 500" })))
      expect(yield* verify({ success: false }, 400))
        .toEqual(Either.left(expect.objectContaining({ reason: "bad_response", message: "facilitator verify failed with status 400" })))
    }))
})

describe("no answer", () => {
  it.effect("a refused connection is unreachable, an oversized answer bad_response, a slow one a timeout, each naming the operation", () =>
    Effect.gen(function*() {
      const f = yield* facilitator({ verifyMs: 100, settleMs: 100 })
      server.use(http.post(`${URL_}/settle`, () => HttpResponse.error()))
      expect(yield* Effect.flip(f.settle(paymentV2, baseSepolia))).toMatchObject({ reason: "unreachable", message: "facilitator settle: could not connect" })
      server.use(http.post(`${URL_}/settle`, () => HttpResponse.json({ ...settled, padding: "x".repeat(2 << 20) })))
      expect(yield* Effect.flip(f.settle(paymentV2, baseSepolia))).toMatchObject({
        reason: "bad_response",
        message: "facilitator settle answered with more data than a settle answer holds"
      })
      server.use(http.post(`${URL_}/verify`, async () => {
        await delay("infinite")
        return HttpResponse.json({ isValid: true })
      }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "timeout", message: "facilitator verify gave no answer within 100 ms" })
    }))

  it.effect("a limit given for one operation leaves the others at their defaults", () =>
    Effect.gen(function*() {
      answer("settle", settled)
      const f = yield* facilitator({ verifyMs: 50 })
      expect((yield* f.settle(paymentV2, baseSepolia)).success).toBe(true)
      server.use(http.post(`${URL_}/verify`, async () => {
        await delay("infinite")
        return HttpResponse.json({ isValid: true })
      }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ message: "facilitator verify gave no answer within 50 ms" })
    }))
})

describe("what is sent", () => {
  it.effect("a v2 payment with v2 requirements and our discovery; a v1 payment as received with v1 requirements", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      const v2 = answer("verify", { isValid: true })
      yield* f.verify(paymentV2, baseSepolia)
      expect(v2).toEqual([{
        x402Version: 2,
        paymentPayload: { ...specPayloadV2(), resource: { ...specPayloadV2().resource, ...serviceMetadata(new URL(baseSepolia.resource).origin) }, extensions: { bazaar: CHECKOUT_DISCOVERY } },
        paymentRequirements: {
          scheme: "exact",
          network: NETWORK,
          asset: baseSepolia.asset,
          amount: "10000",
          payTo: baseSepolia.payTo,
          maxTimeoutSeconds: 300,
          extra: { name: "USDC", version: "2" }
        }
      }])
      const v1 = answer("settle", settled)
      yield* f.settle(paymentV1, baseSepolia)
      expect(v1).toEqual([{
        x402Version: 1,
        paymentPayload: specPayloadV1(),
        paymentRequirements: {
          scheme: "exact",
          network: "base-sepolia",
          maxAmountRequired: "10000",
          resource: baseSepolia.resource,
          description: baseSepolia.description,
          mimeType: "application/gzip",
          payTo: baseSepolia.payTo,
          maxTimeoutSeconds: 300,
          asset: baseSepolia.asset,
          extra: { name: "USDC", version: "2" }
        }
      }])
    }))

  it.effect("to <url>/verify and <url>/settle, trailing slashes of the URL dropped", () =>
    Effect.gen(function*() {
      const bodies = answer("verify", { isValid: true })
      yield* (yield* facilitator({}, `${URL_}//`)).verify(paymentV2, baseSepolia)
      expect(bodies).toHaveLength(1)
    }))

  it.effect("has no status call: a sale's status is the chain readers' business", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      expect(yield* f.status(undefined as never)).toEqual({ _tag: "Unknown", reason: "no chain reader configured" })
    }))

  it.effect("each call is traced as FacilitatorHttp.<operation>", () =>
    Effect.gen(function*() {
      const names: Array<string> = []
      const base = yield* Effect.tracer
      const recording = Tracer.make({
        span: (...args) => {
          names.push(args[0])
          return base.span(...args)
        },
        context: base.context
      })
      answer("verify", { isValid: true })
      answer("settle", settled)
      server.use(http.get(`${URL_}/supported`, () => HttpResponse.json({ kinds: [], extensions: [], signers: {} })))
      const live = yield* makeFacilitatorHttp(URL_)
      yield* Effect.withTracer(live.facilitator.verify(paymentV2, baseSepolia), recording)
      yield* Effect.withTracer(live.facilitator.settle(paymentV2, baseSepolia), recording)
      yield* Effect.withTracer(live.solanaFeePayer, recording)
      expect(names).toEqual(["FacilitatorHttp.verify", "FacilitatorHttp.settle", "FacilitatorHttp.supported"])
    }))
})

describe("solanaFeePayer from /supported", () => {
  const supported = (kinds: ReadonlyArray<unknown>) => {
    let calls = 0
    server.use(http.get(`${URL_}/supported`, () => {
      calls++
      return HttpResponse.json({ kinds, extensions: [], signers: {} })
    }))
    return () => calls
  }
  const feePayer = Effect.flatMap(makeFacilitatorHttp(URL_), (f) => f.solanaFeePayer)
  const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"

  it.effect("an exact kind on Solana mainnet, v2 name or v1 name; the v2 kind first; an empty fee payer skipped", () =>
    Effect.gen(function*() {
      supported([
        { x402Version: 1, scheme: "exact", network: "solana", extra: { feePayer: "V1Payer" } },
        { x402Version: 2, scheme: "exact", network: MAINNET, extra: { feePayer: SOLANA_FEE_PAYER } }
      ])
      expect(yield* feePayer).toEqual(Option.some(SOLANA_FEE_PAYER))
      supported([
        { x402Version: 2, scheme: "exact", network: MAINNET, extra: { feePayer: "" } },
        { x402Version: 1, scheme: "exact", network: "solana", extra: { feePayer: "V1Payer" } }
      ])
      expect(yield* feePayer).toEqual(Option.some("V1Payer"))
      supported([
        { x402Version: 2, scheme: "upto", network: MAINNET, extra: { feePayer: "UptoPayer" } },
        { x402Version: 2, scheme: "exact", network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", extra: { feePayer: "DevnetPayer" } },
        { x402Version: 1, scheme: "exact", network: "solana-devnet", extra: { feePayer: "DevnetPayer" } },
        { x402Version: 2, scheme: "exact", network: MAINNET },
        { x402Version: 2, scheme: "exact", network: MAINNET, extra: { feePayer: 42 } }
      ])
      expect(yield* feePayer).toEqual(Option.none())
    }))

  it.effect("concurrent first reads ask /supported once", () =>
    Effect.gen(function*() {
      const calls = supported([{ x402Version: 2, scheme: "exact", network: MAINNET, extra: { feePayer: SOLANA_FEE_PAYER } }])
      const f = yield* makeFacilitatorHttp(URL_)
      const all = yield* Effect.all(Array.from({ length: 5 }, () => f.solanaFeePayer), { concurrency: "unbounded" })
      expect(all).toEqual(Array.from({ length: 5 }, () => Option.some(SOLANA_FEE_PAYER)))
      expect(calls()).toBe(1)
    }))

  it.effect("a refused connection is unreachable, an error status or malformed data bad_response, a slow answer a timeout", () =>
    Effect.gen(function*() {
      server.use(http.get(`${URL_}/supported`, () => HttpResponse.error()))
      expect(yield* Effect.flip(feePayer)).toMatchObject({ reason: "unreachable", message: "facilitator supported: could not connect" })
      server.use(http.get(`${URL_}/supported`, () => new HttpResponse("down", { status: 503 })))
      expect(yield* Effect.flip(feePayer)).toMatchObject({ reason: "bad_response", message: "facilitator supported failed with an error status" })
      server.use(http.get(`${URL_}/supported`, () => new HttpResponse("{kinds", { headers: { "content-type": "application/json" } })))
      expect(yield* Effect.flip(feePayer)).toMatchObject({ reason: "bad_response", message: "facilitator supported answered with malformed data" })
      server.use(http.get(`${URL_}/supported`, () => HttpResponse.json({ kinds: "all" })))
      expect(yield* Effect.flip(feePayer)).toMatchObject({ reason: "bad_response", message: "facilitator supported answered with malformed data" })
      server.use(http.get(`${URL_}/supported`, async () => {
        await delay("infinite")
        return HttpResponse.json({ kinds: [] })
      }))
      const slow = yield* makeFacilitatorHttp(URL_, { supportedMs: 100 })
      expect(yield* Effect.flip(slow.solanaFeePayer)).toMatchObject({ reason: "timeout", message: "facilitator supported gave no answer within 100 ms" })
    }))
})

describe("configuration", () => {
  const fromEnv = (env: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(env)))
  const read = <A>(config: Effect.Effect<A, unknown>, env: Record<string, string>) =>
    Effect.either(config.pipe(Effect.withConfigProvider(fromEnv(env))))

  it.effect("X402_FACILITATOR_URL: an absolute http(s) URL without credentials, query or fragment; blank or unset is none", () =>
    Effect.gen(function*() {
      expect(yield* read(FacilitatorUrl, {})).toEqual(Either.right(Option.none()))
      expect(yield* read(FacilitatorUrl, { X402_FACILITATOR_URL: " \t" })).toEqual(Either.right(Option.none()))
      expect(yield* read(FacilitatorUrl, { X402_FACILITATOR_URL: " https://f.test/x402 " })).toEqual(Either.right(Option.some("https://f.test/x402")))
      expect(yield* read(FacilitatorUrl, { X402_FACILITATOR_URL: "http://127.0.0.1:4021" })).toEqual(Either.right(Option.some("http://127.0.0.1:4021")))
      for (const bad of ["f.test/x402", "ftp://f.test", "wss://f.test", "https://user@f.test", "https://:hunter2@f.test", "https://f.test/?key=hunter2", "https://f.test/#hunter2"]) {
        const result = yield* read(FacilitatorUrl, { X402_FACILITATOR_URL: bad })
        expect(Either.isLeft(result), bad).toBe(true)
        expect(String(Either.getLeft(result).pipe(Option.getOrUndefined)), bad).toContain("must be an absolute http(s) URL without credentials, query or fragment")
        expect(String(Either.getLeft(result).pipe(Option.getOrUndefined)), bad).not.toContain("hunter2")
      }
    }))

  it.effect("X402_FACILITATOR_TIMEOUT_MS: a whole number from 1 to 600000", () =>
    Effect.gen(function*() {
      expect(yield* read(FacilitatorTimeoutMs, {})).toEqual(Either.right(Option.none()))
      expect(yield* read(FacilitatorTimeoutMs, { X402_FACILITATOR_TIMEOUT_MS: "1" })).toEqual(Either.right(Option.some(1)))
      expect(yield* read(FacilitatorTimeoutMs, { X402_FACILITATOR_TIMEOUT_MS: "600000" })).toEqual(Either.right(Option.some(600_000)))
      for (const bad of ["0", "600001", "-1"]) {
        const result = yield* read(FacilitatorTimeoutMs, { X402_FACILITATOR_TIMEOUT_MS: bad })
        expect(String(Either.getLeft(result).pipe(Option.getOrUndefined)), bad).toContain("must be a whole number of milliseconds from 1 to 600000")
      }
    }))

  it.effect("the configured limit applies to verify, settle and /supported alike", () =>
    Effect.gen(function*() {
      for (const path of ["verify", "settle"] as const) {
        server.use(http.post(`${URL_}/${path}`, async () => {
          await delay("infinite")
          return HttpResponse.json({})
        }))
      }
      server.use(http.get(`${URL_}/supported`, async () => {
        await delay("infinite")
        return HttpResponse.json({ kinds: [] })
      }))
      const live = Option.getOrThrow(Either.getOrThrow(yield* read(facilitatorHttpFromConfig, { X402_FACILITATOR_URL: URL_, X402_FACILITATOR_TIMEOUT_MS: "100" })))
      expect(yield* Effect.flip(live.facilitator.verify(paymentV2, baseSepolia))).toMatchObject({ message: "facilitator verify gave no answer within 100 ms" })
      expect(yield* Effect.flip(live.facilitator.settle(paymentV2, baseSepolia))).toMatchObject({ message: "facilitator settle gave no answer within 100 ms" })
      expect(yield* Effect.flip(live.solanaFeePayer)).toMatchObject({ reason: "timeout" })
      expect(yield* read(facilitatorHttpFromConfig, {})).toEqual(Either.right(Option.none()))
    }))
})

import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option } from "effect"
import { delay, http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { facilitatorHttpFromConfig, makeFacilitatorHttp } from "../../../adapters/x402/FacilitatorHttp.js"
import { CHECKOUT_DISCOVERY, serviceMetadata } from "../../../codec/BazaarDiscovery.js"
import { decodePaymentHeader } from "../../../codec/Wire.js"
import type { SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import { b64, baseSepolia, SOLANA_FEE_PAYER, specPayloadV1, specPayloadV2 } from "./fixtures.js"

const URL_ = "https://facilitator.test/x402"
const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const PAYER = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
const TX = "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"
const paymentV2: SubmittedPayment = Either.getOrThrow(decodePaymentHeader({ "payment-signature": b64(specPayloadV2()) }))
const paymentV1: SubmittedPayment = Either.getOrThrow(decodePaymentHeader({ "x-payment": b64(specPayloadV1()) }))

/** Answers `path` with `answer` and records each request body. */
const answer = (path: "verify" | "settle", respond: () => Response | Promise<Response>) => {
  const bodies: Array<unknown> = []
  server.use(http.post(`${URL_}/${path}`, async ({ request }) => {
    bodies.push(await request.json())
    return respond()
  }))
  return bodies
}

const facilitator = (timeouts = {}) => Effect.map(makeFacilitatorHttp(URL_, timeouts), (f) => f.facilitator)

describe("FacilitatorHttp.verify", () => {
  it.effect("sends x402Version, the payload as received with our bazaar declaration, and v2 requirements, and reads a valid answer", () =>
    Effect.gen(function*() {
      const bodies = answer("verify", () => HttpResponse.json({ isValid: true, payer: PAYER }))
      const result = yield* (yield* facilitator()).verify(paymentV2, baseSepolia)
      expect(result).toEqual({ valid: true, invalidReason: null, payer: PAYER })
      expect(bodies).toEqual([{
        x402Version: 2,
        paymentPayload: { ...specPayloadV2(), resource: { ...specPayloadV2().resource, ...serviceMetadata(new URL(baseSepolia.resource).origin) }, extensions: { bazaar: CHECKOUT_DISCOVERY } },
        paymentRequirements: {
          scheme: "exact",
          network: "eip155:84532",
          asset: baseSepolia.asset,
          amount: "10000",
          payTo: baseSepolia.payTo,
          maxTimeoutSeconds: 300,
          extra: { name: "USDC", version: "2" }
        }
      }])
    }))

  it.effect("a buyer's echoed bazaar extension and resource are replaced by ours; its other extensions are kept", () =>
    Effect.gen(function*() {
      const poisoned = {
        ...specPayloadV2(),
        resource: { url: "https://evil.example/x", description: "<script>buy here</script>", mimeType: "text/html" },
        extensions: {
          bazaar: { info: { input: { type: "http", method: "POST" } }, schema: {}, routeTemplate: "/checkout/:id" },
          other: { info: { a: 1 }, schema: {} }
        }
      }
      const payment = Either.getOrThrow(decodePaymentHeader({ "payment-signature": b64(poisoned) }))
      const verified = answer("verify", () => HttpResponse.json({ isValid: true, payer: PAYER }))
      const settled = answer("settle", () => HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532", payer: PAYER }))
      const f = yield* facilitator()
      yield* f.verify(payment, baseSepolia)
      yield* f.settle(payment, baseSepolia)
      const bodies = [...verified, ...settled]
      expect(bodies).toHaveLength(2)
      for (const body of bodies as Array<any>) {
        expect(body.paymentPayload.resource).toEqual({ url: baseSepolia.resource, description: baseSepolia.description, mimeType: "application/gzip", ...serviceMetadata(new URL(baseSepolia.resource).origin) })
        expect(body.paymentPayload.extensions).toEqual({ bazaar: CHECKOUT_DISCOVERY, other: { info: { a: 1 }, schema: {} } })
        expect(body.paymentPayload.payload).toEqual(specPayloadV2().payload)
      }
    }))

  it.effect("sends a v1 payment in v1 shapes: maxAmountRequired and the v1 network name", () =>
    Effect.gen(function*() {
      const bodies = answer("verify", () => HttpResponse.json({ isValid: true, payer: PAYER }))
      yield* (yield* facilitator()).verify(paymentV1, baseSepolia)
      expect(bodies).toEqual([{
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

  it.effect("reads isValid false with its reason, whether answered 200 or 400", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: "insufficient_funds", payer: PAYER }))
      expect(yield* f.verify(paymentV2, baseSepolia)).toEqual({ valid: false, invalidReason: "insufficient_funds", payer: PAYER })
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: "invalid_exact_evm_payload_signature" }, { status: 400 }))
      expect(yield* f.verify(paymentV2, baseSepolia)).toEqual({ valid: false, invalidReason: "invalid_exact_evm_payload_signature", payer: null })
    }))

  it.effect("a 500 is a bad_response, a refused connection is unreachable, neither naming the URL", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("verify", () => new HttpResponse("upstream exploded: secret=abc", { status: 500 }))
      const e500 = yield* Effect.flip(f.verify(paymentV2, baseSepolia))
      expect(e500).toMatchObject({ _tag: "FacilitatorError", reason: "bad_response" })
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: "unexpected_verify_error" }, { status: 502 }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
      answer("verify", () => HttpResponse.error())
      const down = yield* Effect.flip(f.verify(paymentV2, baseSepolia))
      expect(down).toMatchObject({ _tag: "FacilitatorError", reason: "unreachable" })
      for (const e of [e500, down]) {
        expect(e?.message).not.toContain("facilitator.test")
        expect(e?.message).not.toContain("secret")
      }
    }))

  it.effect("malformed JSON and a body of the wrong shape are bad_response", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("verify", () => new HttpResponse("{not json", { headers: { "content-type": "application/json" } }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
      answer("verify", () => HttpResponse.json({ valid: "yes" }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
    }))

  it.effect("gives up after the verify timeout", () =>
    Effect.gen(function*() {
      answer("verify", async () => {
        await delay("infinite")
        return HttpResponse.json({ isValid: true })
      })
      const started = Date.now()
      const e = yield* Effect.flip((yield* facilitator({ verifyMs: 100 })).verify(paymentV2, baseSepolia))
      expect(e).toMatchObject({ reason: "timeout", message: "facilitator verify gave no answer within 100 ms" })
      expect(Date.now() - started).toBeLessThan(5_000)
    }))
})

describe("FacilitatorHttp.settle", () => {
  it.effect("reads a settled payment and sends the same body shape as verify", () =>
    Effect.gen(function*() {
      const bodies = answer("settle", () => HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532", payer: PAYER }))
      const result = yield* (yield* facilitator()).settle(paymentV2, baseSepolia)
      expect(result).toEqual({ success: true, transaction: TX, network: "eip155:84532", payer: PAYER, errorReason: null })
      expect(bodies).toMatchObject([{ x402Version: 2, paymentPayload: specPayloadV2(), paymentRequirements: { amount: "10000" } }])
    }))

  it.effect("keeps the CAIP-2 network when a v1 facilitator answers with the v1 name", () =>
    Effect.gen(function*() {
      answer("settle", () => HttpResponse.json({ success: true, transaction: TX, network: "base-sepolia", payer: PAYER }))
      expect((yield* (yield* facilitator()).settle(paymentV1, baseSepolia)).network).toBe("eip155:84532")
    }))

  it.effect("reads a failed settlement with its reason, whether answered 200 or 400", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "insufficient_funds", transaction: "", network: "eip155:84532", payer: PAYER }))
      expect(yield* f.settle(paymentV2, baseSepolia)).toEqual({ success: false, transaction: null, network: "eip155:84532", payer: PAYER, errorReason: "insufficient_funds" })
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "invalid_transaction_state", transaction: "", network: "eip155:84532" }, { status: 400 }))
      expect(yield* f.settle(paymentV2, baseSepolia)).toMatchObject({ success: false, errorReason: "invalid_transaction_state", transaction: null })
    }))

  it.effect("keeps the transaction a failed settlement names (x402's settlement_pending, or a refusal after a broadcast), answered 200 or 400", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "settlement_pending", transaction: TX, network: "eip155:84532", payer: PAYER }))
      expect(yield* f.settle(paymentV2, baseSepolia)).toEqual({ success: false, transaction: TX, network: "eip155:84532", payer: PAYER, errorReason: "settlement_pending" })
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "invalid_transaction_state", transaction: TX, network: "eip155:84532" }, { status: 400 }))
      expect(yield* f.settle(paymentV2, baseSepolia)).toEqual({ success: false, transaction: TX, network: "eip155:84532", payer: null, errorReason: "invalid_transaction_state" })
      answer("settle", () => HttpResponse.json({ success: false, errorReason: "settlement_pending", network: "eip155:84532" }, { status: 400 }))
      expect(yield* f.settle(paymentV2, baseSepolia)).toMatchObject({ success: false, transaction: null, errorReason: "settlement_pending" })
    }))

  it.effect("a success without a transaction, a 500 and malformed JSON are bad_response", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      for (const respond of [
        () => HttpResponse.json({ success: true, transaction: "", network: "eip155:84532" }),
        () => new HttpResponse("oops", { status: 500 }),
        () => new HttpResponse("[1,", { headers: { "content-type": "application/json" } })
      ]) {
        answer("settle", respond)
        expect(yield* Effect.flip(f.settle(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
      }
    }))

  it.effect("gives up after the settle timeout, which is separate from verify's", () =>
    Effect.gen(function*() {
      answer("settle", async () => {
        await delay(400)
        return HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532" })
      })
      const slowOk = yield* facilitator({ verifyMs: 50, settleMs: 2_000 })
      expect((yield* slowOk.settle(paymentV2, baseSepolia)).success).toBe(true)
      const tooSlow = yield* facilitator({ verifyMs: 2_000, settleMs: 100 })
      expect(yield* Effect.flip(tooSlow.settle(paymentV2, baseSepolia))).toMatchObject({ reason: "timeout", message: "facilitator settle gave no answer within 100 ms" })
    }))
})

describe("FacilitatorHttp over the wire", () => {
  it.effect("the settle time limit holds inside an uninterruptible region (a purchase settles in one)", () =>
    Effect.gen(function*() {
      answer("settle", async () => {
        await delay("infinite")
        return HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532" })
      })
      const f = yield* facilitator({ settleMs: 100 })
      const started = Date.now()
      expect(yield* Effect.flip(Effect.uninterruptible(f.settle(paymentV2, baseSepolia)))).toMatchObject({ reason: "timeout" })
      expect(Date.now() - started).toBeLessThan(5_000)
    }))

  it.effect("follows a 307 or 308 with the same method and body; any other redirect is no answer", () =>
    Effect.gen(function*() {
      const moved = `${URL_}/v2`
      server.use(
        http.post(`${URL_}/verify`, () => new HttpResponse(null, { status: 307, headers: { location: "v2/verify" } })),
        http.post(`${URL_}/settle`, () => new HttpResponse(null, { status: 308, headers: { location: `${moved}/settle` } }))
      )
      const verified: Array<unknown> = []
      server.use(http.post(`${moved}/verify`, async ({ request }) => {
        verified.push(await request.json())
        return HttpResponse.json({ isValid: true, payer: PAYER })
      }))
      const settled: Array<unknown> = []
      server.use(http.post(`${moved}/settle`, async ({ request }) => {
        settled.push(await request.json())
        return HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532", payer: PAYER })
      }))
      const f = yield* facilitator()
      expect(yield* f.verify(paymentV2, baseSepolia)).toMatchObject({ valid: true })
      expect(yield* f.settle(paymentV2, baseSepolia)).toMatchObject({ success: true, transaction: TX })
      expect(verified).toMatchObject([{ x402Version: 2, paymentRequirements: { amount: "10000" } }])
      expect(settled).toMatchObject([{ x402Version: 2, paymentRequirements: { amount: "10000" } }])

      server.use(http.post(`${URL_}/verify`, () => new HttpResponse(null, { status: 302, headers: { location: `${moved}/verify` } })))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response", message: "facilitator verify failed with status 302" })
      // A redirect loop ends after a few hops.
      let hops = 0
      server.use(http.post(`${URL_}/verify`, () => {
        hops++
        return new HttpResponse(null, { status: 307, headers: { location: `${URL_}/verify` } })
      }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
      expect(hops).toBe(4)
    }))

  it.effect("an answer larger than any verify answer is not read", () =>
    Effect.gen(function*() {
      answer("verify", () => HttpResponse.json({ isValid: true, payer: PAYER, padding: "x".repeat(2 << 20) }))
      expect(yield* Effect.flip((yield* facilitator()).verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
    }))

  it.effect("a verify answer with a field of the wrong type is malformed; null optional fields are absent", () =>
    Effect.gen(function*() {
      const f = yield* facilitator()
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: 42 }))
      expect(yield* Effect.flip(f.verify(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
      answer("verify", () => HttpResponse.json({ isValid: false, invalidReason: null, payer: null }))
      expect(yield* f.verify(paymentV2, baseSepolia)).toEqual({ valid: false, invalidReason: "invalid_payment", payer: null })
      answer("settle", () => HttpResponse.json({ success: true, transaction: TX }))
      expect(yield* Effect.flip(f.settle(paymentV2, baseSepolia))).toMatchObject({ reason: "bad_response" })
    }))
})

describe("FacilitatorHttp.solanaFeePayer", () => {
  const supported = (kinds: ReadonlyArray<unknown>) => {
    let calls = 0
    server.use(http.get(`${URL_}/supported`, () => {
      calls++
      return HttpResponse.json({ kinds, extensions: [], signers: {} })
    }))
    return () => calls
  }

  it.effect("reads the Solana mainnet fee payer from /supported once and keeps it", () =>
    Effect.gen(function*() {
      const calls = supported([
        { x402Version: 2, scheme: "exact", network: "eip155:8453" },
        { x402Version: 2, scheme: "exact", network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", extra: { feePayer: "DevnetPayer111111111111111111111111111111111" } },
        { x402Version: 2, scheme: "exact", network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", extra: { feePayer: SOLANA_FEE_PAYER } }
      ])
      const f = yield* makeFacilitatorHttp(URL_)
      expect(yield* f.solanaFeePayer).toEqual(Option.some(SOLANA_FEE_PAYER))
      expect(yield* f.solanaFeePayer).toEqual(Option.some(SOLANA_FEE_PAYER))
      expect(calls()).toBe(1)
    }))

  it.effect("is none when the facilitator does not settle on Solana mainnet", () =>
    Effect.gen(function*() {
      supported([{ x402Version: 2, scheme: "exact", network: "eip155:8453" }])
      expect(yield* (yield* makeFacilitatorHttp(URL_)).solanaFeePayer).toEqual(Option.none())
    }))

  it.effect("does not keep a failed read: the next call asks again", () =>
    Effect.gen(function*() {
      server.use(http.get(`${URL_}/supported`, () => new HttpResponse("down", { status: 503 }), { once: true }))
      const f = yield* makeFacilitatorHttp(URL_)
      expect(yield* Effect.flip(f.solanaFeePayer)).toMatchObject({ reason: "bad_response" })
      supported([{ x402Version: 1, scheme: "exact", network: "solana", extra: { feePayer: SOLANA_FEE_PAYER } }])
      expect(yield* f.solanaFeePayer).toEqual(Option.some(SOLANA_FEE_PAYER))
    }))
})

describe("facilitatorHttpFromConfig", () => {
  const fromEnv = (env: Record<string, string>) =>
    facilitatorHttpFromConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it.effect("is none when X402_FACILITATOR_URL is unset or blank", () =>
    Effect.gen(function*() {
      expect(yield* fromEnv({})).toEqual(Option.none())
      expect(yield* fromEnv({ X402_FACILITATOR_URL: "  " })).toEqual(Option.none())
    }))

  it.effect("builds a facilitator that calls the configured URL", () =>
    Effect.gen(function*() {
      const bodies = answer("verify", () => HttpResponse.json({ isValid: true }))
      const live = yield* fromEnv({ X402_FACILITATOR_URL: `${URL_}/` })
      expect(Option.isSome(live)).toBe(true)
      yield* Option.getOrThrow(live).facilitator.verify(paymentV2, baseSepolia)
      expect(bodies).toHaveLength(1)
    }))

  it.effect("X402_FACILITATOR_TIMEOUT_MS limits every call; a malformed one fails start-up naming it", () =>
    Effect.gen(function*() {
      answer("settle", async () => {
        await delay("infinite")
        return HttpResponse.json({ success: true, transaction: TX, network: "eip155:84532" })
      })
      const live = Option.getOrThrow(yield* fromEnv({ X402_FACILITATOR_URL: URL_, X402_FACILITATOR_TIMEOUT_MS: "100" }))
      expect(yield* Effect.flip(live.facilitator.settle(paymentV2, baseSepolia))).toMatchObject({
        reason: "timeout",
        message: "facilitator settle gave no answer within 100 ms"
      })
      for (const bad of ["0", "-5", "1.5", "soon", "600001"]) {
        const text = String(yield* Effect.flip(fromEnv({ X402_FACILITATOR_URL: URL_, X402_FACILITATOR_TIMEOUT_MS: bad })))
        expect(text, bad).toContain("X402_FACILITATOR_TIMEOUT_MS")
      }
    }))

  it.effect("fails start-up naming X402_FACILITATOR_URL, without echoing it, when it is malformed", () =>
    Effect.gen(function*() {
      for (const bad of ["not a url", "ftp://facilitator.test", "https://user:hunter2@facilitator.test", "https://facilitator.test/?key=hunter2"]) {
        const text = String(yield* Effect.flip(fromEnv({ X402_FACILITATOR_URL: bad })))
        expect(text, bad).toContain("X402_FACILITATOR_URL")
        expect(text, bad).not.toContain("hunter2")
      }
    }))
})

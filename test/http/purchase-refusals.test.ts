import { expect, layer } from "@effect/vitest"
import type { PaymentRequirements } from "@x402/core/types"
import { Effect, type Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { BASE_WALLET, BASE_WALLET_2 } from "../support/app.js"
import {
  acceptedOf,
  b64,
  challenge,
  expectProblemResponse,
  get,
  paymentSignature,
  payWith,
  PurchaseApp,
  REAL_TIME,
  salesOf,
  type Selling,
  sell,
  signEvm,
  signEvmByHand,
  unb64
} from "../support/purchase.js"

/*
 * Payments the test twin must refuse, each through HTTP with a real signature (the official client's, or one
 * signed by hand with x402's EIP-712 types): the answer is 402 with fresh requirements naming the reason, or
 * 400 for a header that is not a payment at all, and the ledger stays empty.
 */

const SEPOLIA = "eip155:84532"
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"

interface Ctx {
  readonly seller: Selling
  readonly required: any
  readonly accepted: PaymentRequirements
  readonly buyer: PrivateKeyAccount
  readonly now: bigint
}

type AppServices = Layer.Layer.Success<ReturnType<typeof PurchaseApp>>

/** One app per case: list the widget for 0.50 on Base, run the case, then the account must have no sale. */
const refusal = (name: string, run: (ctx: Ctx) => Effect.Effect<void, never, AppServices>) =>
  layer(PurchaseApp(), REAL_TIME)(name, (it) => {
    it.effect("is refused and leaves no sale", () =>
      Effect.gen(function*() {
        const seller = yield* sell("refusals@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.test)
        const accepted = acceptedOf(required, SEPOLIA)
        const buyer = privateKeyToAccount(generatePrivateKey())
        yield* run({ seller, required, accepted, buyer, now: BigInt(Math.floor(Date.now() / 1000)) })
        expect(yield* salesOf(seller.accountId)).toEqual([])
      }))
  })

/** Asserts the x402 refusal: 402, fresh requirements with the reason, no receipt, no goods. */
const expectRefused = (ctx: Ctx, signature: unknown, reason: string) =>
  Effect.gen(function*() {
    const res = yield* payWith(ctx.seller.test, signature)
    const body = yield* Effect.promise(() => res.text())
    expect(res.status, body).toBe(402)
    const required = unb64(res.headers.get("payment-required"))
    expect(required.error).toBe(reason)
    expect(required.accepts).toEqual(ctx.required.accepts)
    expect(JSON.parse(body)).toMatchObject({ x402Version: 1, error: reason })
    expect(res.headers.get("payment-response")).toBeNull()
    expect(res.headers.get("link")).not.toMatch(/rel="receipt"/)
  })

refusal("wrong amount", (ctx) =>
  Effect.gen(function*() {
    // Paid for a lower price, and said so in `accepted`: matches no current requirement.
    const cheaper = { ...ctx.accepted, amount: "400000" }
    yield* expectRefused(ctx, yield* signEvm(ctx.buyer, ctx.required, cheaper), "requirements_mismatch")
    // Claims the price in `accepted` but signed a lower value: the signature check's value rule refuses it.
    const underpaid = yield* signEvmByHand(ctx.buyer, ctx.accepted, { value: 400_000n })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, underpaid), "invalid_exact_evm_payload_authorization_value_mismatch")
    // And more than the price is not the price either.
    const overpaid = yield* signEvmByHand(ctx.buyer, ctx.accepted, { value: 600_000n })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, overpaid), "invalid_exact_evm_payload_authorization_value_mismatch")
  }))

refusal("wrong payTo", (ctx) =>
  Effect.gen(function*() {
    const elsewhere = { ...ctx.accepted, payTo: BASE_WALLET_2 }
    yield* expectRefused(ctx, yield* signEvm(ctx.buyer, ctx.required, elsewhere), "requirements_mismatch")
    const diverted = yield* signEvmByHand(ctx.buyer, ctx.accepted, { to: BASE_WALLET_2 })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, diverted), "invalid_exact_evm_recipient_mismatch")
  }))

refusal("wrong network or asset", (ctx) =>
  Effect.gen(function*() {
    // Another network in `accepted`: Base mainnet on the test checkout, or Solana on a Base-only listing.
    const mainnet = { ...ctx.accepted, network: "eip155:8453" as const, asset: BASE_USDC }
    yield* expectRefused(ctx, yield* signEvm(ctx.buyer, ctx.required, mainnet), "network_mismatch")
    const solana = yield* signEvm(ctx.buyer, ctx.required, ctx.accepted)
    yield* expectRefused(ctx, { ...solana, accepted: { ...ctx.accepted, network: DEVNET } }, "network_mismatch")
    // Another asset in `accepted`.
    const otherAsset = { ...ctx.accepted, asset: BASE_USDC }
    yield* expectRefused(ctx, yield* signEvm(ctx.buyer, ctx.required, otherAsset), "requirements_mismatch")
    // `accepted` as offered, but signed for another chain id or another token contract (EIP-712 domain).
    const otherChain = yield* signEvmByHand(ctx.buyer, ctx.accepted, { chainId: 8453 })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, otherChain), "invalid_exact_evm_signature")
    const otherToken = yield* signEvmByHand(ctx.buyer, ctx.accepted, { verifyingContract: BASE_USDC })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, otherToken), "invalid_exact_evm_signature")
  }))

refusal("expired authorization", (ctx) =>
  Effect.gen(function*() {
    const expired = yield* signEvmByHand(ctx.buyer, ctx.accepted, { validBefore: ctx.now - 10n })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, expired), "invalid_exact_evm_payload_authorization_valid_before")
    // Expiring within the few seconds settlement needs is refused too.
    const closeCall = yield* signEvmByHand(ctx.buyer, ctx.accepted, { validBefore: ctx.now + 2n })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, closeCall), "invalid_exact_evm_payload_authorization_valid_before")
  }))

refusal("not-yet-valid authorization", (ctx) =>
  Effect.gen(function*() {
    const early = yield* signEvmByHand(ctx.buyer, ctx.accepted, { validAfter: ctx.now + 3_600n, validBefore: ctx.now + 7_200n })
    yield* expectRefused(ctx, paymentSignature(ctx.required, ctx.accepted, early), "invalid_exact_evm_payload_authorization_valid_after")
  }))

refusal("tampered signature", (ctx) =>
  Effect.gen(function*() {
    const genuine = yield* signEvm(ctx.buyer, ctx.required, ctx.accepted)
    const payload = genuine.payload as { signature: string; authorization: Record<string, string> }
    const flipped = payload.signature.slice(0, 10) + (payload.signature[10] === "0" ? "1" : "0") + payload.signature.slice(11)
    yield* expectRefused(ctx, { ...genuine, payload: { ...payload, signature: flipped } }, "invalid_exact_evm_signature")
    // The signature is genuine but the authorization it covers was edited (another sender claims it).
    const impostor = privateKeyToAccount(generatePrivateKey()).address
    yield* expectRefused(ctx, { ...genuine, payload: { ...payload, authorization: { ...payload.authorization, from: impostor } } }, "invalid_exact_evm_signature")
    // A signature of the wrong length.
    yield* expectRefused(ctx, { ...genuine, payload: { ...payload, signature: payload.signature.slice(0, 100) } }, "invalid_exact_evm_signature")
  }))

refusal("malformed PAYMENT-SIGNATURE or X-PAYMENT", (ctx) =>
  Effect.gen(function*() {
    const genuine = yield* signEvm(ctx.buyer, ctx.required, ctx.accepted)
    const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
      [{ "payment-signature": "%%% not base64 %%%" }, "PAYMENT-SIGNATURE"],
      [{ "payment-signature": Buffer.from("not json at all").toString("base64") }, "PAYMENT-SIGNATURE"],
      [{ "payment-signature": Buffer.from("[1,2,3]").toString("base64") }, "PAYMENT-SIGNATURE"],
      [{ "payment-signature": b64({ ...genuine, accepted: undefined }) }, "PAYMENT-SIGNATURE"],
      [{ "payment-signature": b64({ ...genuine, x402Version: 3 }) }, "PAYMENT-SIGNATURE"],
      [{ "payment-signature": "" }, "PAYMENT-SIGNATURE"],
      [{ "x-payment": "%%%" }, "X-PAYMENT"]
    ]
    for (const [headers, field] of cases) {
      const problem = yield* expectProblemResponse(yield* get(ctx.seller.test, headers), 400, "invalid_request")
      expect((problem["errors"] as Array<{ field: string }>).map((e) => e.field), JSON.stringify(headers)).toEqual([field])
    }
    // A payload whose authorization cannot be read is malformed for the chain: 402 invalid_payload.
    yield* expectRefused(ctx, { ...genuine, payload: { signature: "0x00" } }, "invalid_payload")
  }))

/*
 * The live checkout against a stranger: a settled payment presented again (whole, or its public from and
 * nonce with a junk signature) never unlocks goods, and junk payments are refused by the service itself
 * (signature, EIP-712 domain, time window, terms) before the facilitator is asked anything; a client that
 * keeps trying is limited per address. The live facilitator is msw, every call counted.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { http, HttpResponse } from "msw"
import { getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { recordingFacilitator } from "../support/recordingFacilitator.js"
import { BASE_WALLET, BASE_WALLET_2 } from "../support/app.js"
import {
  acceptedOf,
  challenge,
  expectGoods,
  expectNoGoods,
  expectProblemResponse,
  onlySale,
  paymentSignature,
  payWith,
  PurchaseApp,
  REAL_TIME,
  sell,
  signEvm,
  signEvmByHand,
  unb64
} from "../support/purchase.js"

const FACILITATOR = "https://facilitator.test"
const BASE = "eip155:8453"
const TX = "0x9f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100"

const { calls, server: facilitator } = recordingFacilitator(FACILITATOR)

const facilitatorSays = (payer: string) =>
  facilitator.use(
    http.post(`${FACILITATOR}/verify`, () => (calls.push({ path: "/verify" }), HttpResponse.json({ isValid: true, payer }))),
    http.post(`${FACILITATOR}/settle`, () => (calls.push({ path: "/settle" }), HttpResponse.json({ success: true, transaction: TX, network: BASE, payer })))
  )

const LiveApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } })
const newBuyer = () => privateKeyToAccount(generatePrivateKey())

layer(LiveApp(), REAL_TIME)("live: a settled payment presented again", (it) => {
  it.effect("whole, or its from and nonce with a junk signature, another payee and value 1: no goods, no receipt link, no facilitator call, no new sale", () =>
    Effect.gen(function*() {
      const seller = yield* sell("live-replay@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.live)
      const accepted = acceptedOf(required, BASE)
      const buyer = newBuyer()
      facilitatorSays(buyer.address)
      const signature = yield* signEvm(buyer, required, accepted)
      yield* expectGoods(yield* payWith(seller.live, signature))
      expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])

      const replayed = yield* expectNoGoods(yield* payWith(seller.live, signature))
      expect(replayed.status).toBe(402)
      expect(unb64(replayed.headers.get("payment-required")).error).toBe("payment_already_used")
      const authorization = (signature.payload as any).authorization
      const forged = paymentSignature(required, accepted, {
        signature: `0x${"11".repeat(65)}`,
        authorization: { ...authorization, to: getAddress(BASE_WALLET_2), value: "1" }
      })
      expect((yield* expectNoGoods(yield* payWith(seller.live, forged))).status).toBe(402)

      expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
      expect(yield* onlySale(seller.accountId)).toMatchObject({ livemode: true, status: "settled", transaction: TX })
      // The live 402 advertises the way a buyer can recover instead: payment-identifier.
      expect(required.extensions?.["payment-identifier"]?.info).toEqual({ required: false })
    }))
})

layer(LiveApp(), REAL_TIME)("live: 200 junk payments", (it) => {
  it.effect("are refused by the service itself with the x402 reason (no /verify call), and past 60 a minute from one address with 429", () =>
    Effect.gen(function*() {
      const seller = yield* sell("live-junk@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.live)
      const accepted = acceptedOf(required, BASE)
      const buyer = newBuyer()
      const now = BigInt(Math.floor(Date.now() / 1000))
      const junk = [
        {
          reason: "invalid_exact_evm_signature",
          payload: { ...(yield* signEvmByHand(buyer, accepted)), signature: `0x${"44".repeat(65)}` }
        },
        // Signed under the Base Sepolia domain: it recovers to someone else under Base's.
        { reason: "invalid_exact_evm_signature", payload: yield* signEvmByHand(buyer, accepted, { chainId: 84532 }) },
        { reason: "invalid_exact_evm_signature", payload: yield* signEvmByHand(buyer, accepted, { verifyingContract: BASE_WALLET_2 }) },
        { reason: "invalid_exact_evm_payload_authorization_valid_before", payload: yield* signEvmByHand(buyer, accepted, { validBefore: now - 10n }) },
        { reason: "invalid_exact_evm_payload_authorization_valid_after", payload: yield* signEvmByHand(buyer, accepted, { validAfter: now + 3600n }) },
        { reason: "invalid_exact_evm_recipient_mismatch", payload: yield* signEvmByHand(buyer, accepted, { to: BASE_WALLET_2 }) },
        { reason: "invalid_exact_evm_payload_authorization_value_mismatch", payload: yield* signEvmByHand(buyer, accepted, { value: 1n }) }
      ]
      const statuses: Array<number> = []
      for (let i = 0; i < 200; i++) {
        const { payload, reason } = junk[i % junk.length]!
        const res = yield* payWith(seller.live, paymentSignature(required, accepted, payload))
        statuses.push(res.status)
        if (res.status === 402) {
          expect(unb64(res.headers.get("payment-required")).error).toBe(reason)
          yield* expectNoGoods(res)
        } else {
          expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)
          yield* expectProblemResponse(res, 429, "rate_limited")
        }
      }
      expect(statuses.slice(0, 60)).toEqual(Array(60).fill(402))
      expect(statuses.slice(60)).toEqual(Array(140).fill(429))
      expect(calls).toEqual([])
    }))
})

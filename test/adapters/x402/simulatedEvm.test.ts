import { describe, expect, it } from "@effect/vitest"
import { authorizationTypes } from "@x402/evm"
import { Effect, Option, TestClock } from "effect"
import { type Hex, getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { baseFacts } from "../../../adapters/evm/BaseAddress.js"
import { makeFacilitatorSimulated } from "../../../adapters/x402/FacilitatorSimulated.js"
import { SIMULATED_FAUCET_ATOMIC } from "../../../adapters/x402/SimulatedLedger.js"
import { AtomicAmount } from "../../../domain/Money.js"
import type { PaymentRequirement } from "../../../ports/PaymentFacilitator.js"
import { PRICE, payEvm, requirement, submitted, testBase } from "./simulatedSupport.js"

const newAccount = () => privateKeyToAccount(generatePrivateKey())

/** A simulated facilitator, a buyer, a seller, the requirement they meet on, and a clock at real time. */
const setup = Effect.gen(function*() {
  // The official client stamps validBefore from Date.now(); start the test clock there.
  yield* TestClock.setTime(Date.now())
  const sim = yield* makeFacilitatorSimulated
  const buyer = newAccount()
  const seller = newAccount().address
  const req = requirement(testBase, { payTo: seller, extra: { ...testBase.extra, ...sim.extra("base") } })
  return { sim, buyer, seller, req }
})

const reasonOf = (sim: Effect.Effect.Success<typeof makeFacilitatorSimulated>, req: PaymentRequirement) =>
  (payment: Effect.Effect.Success<ReturnType<typeof payEvm>>) =>
    sim.facilitator.verify(payment, req).pipe(Effect.map((v) => v.invalidReason))

describe("FacilitatorSimulated on Base Sepolia (official @x402/evm client)", () => {
  it.effect("verifies and settles a valid payment, moving simulated balances", () =>
    Effect.gen(function*() {
      const { buyer, req, seller, sim } = yield* setup
      const payment = yield* payEvm(buyer, req)
      const verification = yield* sim.facilitator.verify(payment, req)
      expect(verification).toEqual({ valid: true, invalidReason: null, payer: buyer.address })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC)

      const settlement = yield* sim.facilitator.settle(payment, req)
      expect(settlement.success).toBe(true)
      expect(settlement.transaction).toMatch(/^sim_0x[0-9a-f]{64}$/)
      expect(settlement).toMatchObject({ network: "eip155:84532", payer: buyer.address, errorReason: null })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC - PRICE)
      expect(sim.ledger.balanceOf(req.network, seller.toLowerCase())).toBe(SIMULATED_FAUCET_ATOMIC + PRICE)
    }))

  it.effect("refuses a payment for another amount", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, { ...req, amount: AtomicAmount.make(PRICE - 1n) })
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_payload_authorization_value_mismatch")
    }))

  it.effect("refuses a payment to another address, and settles nothing for it", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, { ...req, payTo: newAccount().address })
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_recipient_mismatch")
      const settlement = yield* sim.facilitator.settle(payment, req)
      expect(settlement).toMatchObject({ success: false, transaction: null, errorReason: "invalid_exact_evm_recipient_mismatch" })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC)
    }))

  it.effect("refuses a payment made for the live network, and serves no network but the test ones", () =>
    Effect.gen(function*() {
      const { buyer, req, seller, sim } = yield* setup
      const live = requirement(baseFacts(true), { payTo: seller })
      const payment = yield* payEvm(buyer, live)
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_network_mismatch")
      expect(yield* reasonOf(sim, live)(payment)).toBe("unsupported_network")
    }))

  it.effect("refuses a payment signed for another token contract (the EIP-712 domain differs)", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, { ...req, asset: baseFacts(true).asset })
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_signature")
    }))

  it.effect("refuses an authorization that expires within 6 seconds", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, req) // validBefore = now + maxTimeoutSeconds (300), in whole seconds
      // From the second the client stamped it in, not from setup's clock: signing may end in the next second,
      // which would move the expiry one second past what this test counts on.
      const validBefore = Number((payment.payload as { authorization: { validBefore: string } }).authorization.validBefore)
      yield* TestClock.setTime((validBefore - req.maxTimeoutSeconds) * 1000)
      yield* TestClock.adjust("294 seconds") // 6 seconds left: still taken
      expect(yield* reasonOf(sim, req)(payment)).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_payload_authorization_valid_before")
    }))

  it.effect("refuses an authorization that is not valid yet, and accepts it once it is", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      // The official client always signs validAfter = 0, so this one is signed by hand with x402's own types.
      const now = BigInt(Math.floor(Date.now() / 1000))
      const authorization = {
        from: buyer.address,
        to: getAddress(req.payTo),
        value: PRICE,
        validAfter: now + 60n,
        validBefore: now + 600n,
        nonce: `0x${"ab".repeat(32)}` as Hex
      }
      const signature = yield* Effect.promise(() =>
        buyer.signTypedData({
          domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: getAddress(req.asset) },
          types: authorizationTypes,
          primaryType: "TransferWithAuthorization",
          message: authorization
        })
      )
      const payload = {
        signature,
        authorization: { ...authorization, value: `${PRICE}`, validAfter: `${now + 60n}`, validBefore: `${now + 600n}` }
      }
      const payment = submitted(req, payload)
      // The clock from the second the window was stamped from (setup's may be a second or more before it).
      yield* TestClock.setTime(Number(now) * 1000)
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_payload_authorization_valid_after")
      yield* TestClock.adjust("59 seconds")
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_payload_authorization_valid_after")
      yield* TestClock.adjust("1 second") // validAfter itself: valid from then on
      expect(yield* reasonOf(sim, req)(payment)).toBeNull()
    }))

  it.effect("refuses a tampered signature", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, req)
      const { signature, authorization } = payment.payload as { signature: string; authorization: unknown }
      const flipped = signature.slice(0, 10) + (signature[10] === "0" ? "1" : "0") + signature.slice(11)
      const tampered = { ...payment, payload: { signature: flipped, authorization } }
      expect(yield* reasonOf(sim, req)(tampered)).toBe("invalid_exact_evm_signature")
      expect(yield* reasonOf(sim, req)(payment)).toBeNull()
    }))

  it.effect("refuses a nonce already settled: the second settlement fails and money moves once", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, req)
      expect((yield* sim.facilitator.settle(payment, req)).success).toBe(true)
      expect(yield* reasonOf(sim, req)(payment)).toBe("invalid_exact_evm_nonce_already_used")
      const again = yield* sim.facilitator.settle(payment, req)
      expect(again).toMatchObject({ success: false, transaction: null, errorReason: "invalid_exact_evm_nonce_already_used" })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC - PRICE)
    }))

  it.effect("settles exactly once when the same payment is settled concurrently", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* payEvm(buyer, req)
      const results = yield* Effect.all(Array.from({ length: 10 }, () => sim.facilitator.settle(payment, req)), {
        concurrency: "unbounded"
      })
      expect(results.filter((s) => s.success)).toHaveLength(1)
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC - PRICE)
    }))

  it.effect("refuses a payment above the faucet balance", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const big = { ...req, amount: AtomicAmount.make(SIMULATED_FAUCET_ATOMIC + 1n) }
      const payment = yield* payEvm(buyer, big)
      expect(yield* reasonOf(sim, big)(payment)).toBe("invalid_exact_evm_insufficient_balance")
    }))

  it.effect("answers malformed payloads with a reason instead of failing", () =>
    Effect.gen(function*() {
      const { req, sim } = yield* setup
      for (const payload of [null, "x", {}, { signature: "0x12", authorization: { from: "0x1" } }]) {
        const v = yield* sim.facilitator.verify({ ...submitted(req, payload), accepted: Option.none() }, req)
        expect(v).toEqual({ valid: false, invalidReason: "invalid_payload", payer: null })
      }
    }))
})

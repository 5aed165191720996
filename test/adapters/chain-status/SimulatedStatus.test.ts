/*
 * The test twin's status read holds to the rule the chain readers follow: a used payment key settles a sale only
 * if its transfer paid the sale's amount from its payer to its payTo (the simulated ledger, like USDC, keys a
 * transfer by payer and nonce only).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { generateKeyPairSigner } from "@solana/kit"
import { Effect, Either, TestClock } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeFacilitatorSimulated } from "../../../adapters/x402/FacilitatorSimulated.js"
import { AtomicAmount } from "../../../domain/Money.js"
import { aSale } from "../../../testing/Fixtures.js"
import { solanaPaymentIdentity } from "../../../adapters/solana/SolanaPayment.js"
import { payEvm, paySolana, PRICE, requirement, solanaRpc, testBase, testSolana } from "../x402/simulatedSupport.js"

beforeAll(() => solanaRpc.listen({ onUnhandledRequest: "error" }))
afterAll(() => solanaRpc.close())

const newAccount = () => privateKeyToAccount(generatePrivateKey())

describe("the simulated facilitator's status (test twin)", () => {
  it.effect("settled only for the sale whose payer, payTo and amount the used transfer names; a sale with other terms on the same key fails; an unused key is unsettled", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const sim = yield* makeFacilitatorSimulated
      const buyer = newAccount()
      const seller = newAccount().address
      const req = requirement(testBase, { payTo: seller, extra: { ...testBase.extra, ...sim.extra("base") } })
      const payment = yield* payEvm(buyer, req)
      const { nonce } = (payment.payload as any).authorization
      const sale = aSale({
        livemode: false,
        network: req.network,
        paymentKey: `${req.network}:eip3009:${buyer.address.toLowerCase()}:${nonce}`,
        payer: buyer.address,
        payTo: seller.toLowerCase(),
        amount: PRICE
      })
      expect(yield* sim.facilitator.status(sale)).toEqual({ _tag: "Unsettled" })
      const settlement = yield* sim.facilitator.settle(payment, req)
      expect(settlement.success).toBe(true)
      expect(yield* sim.facilitator.status(sale)).toEqual({ _tag: "Settled", transaction: settlement.transaction })
      for (const other of [
        { ...sale, payTo: newAccount().address },
        { ...sale, amount: AtomicAmount.make(PRICE + 1n) },
        { ...sale, payer: newAccount().address }
      ]) {
        expect(yield* sim.facilitator.status(other as typeof sale)).toEqual({ _tag: "Failed", reason: "authorization_used_for_another_transfer" })
      }
    }))

  it.effect("Solana: settled for the sale the transfer paid (addresses compared exactly: base58 is case-sensitive); other terms fail", () =>
    Effect.gen(function*() {
      const sim = yield* makeFacilitatorSimulated
      const buyer = yield* Effect.promise(() => generateKeyPairSigner())
      const seller = (yield* Effect.promise(() => generateKeyPairSigner())).address
      const req = requirement(testSolana, { payTo: seller, extra: { ...testSolana.extra, ...sim.extra("solana") } })
      const payment = yield* paySolana(buyer, req)
      const key = Either.getOrThrow(solanaPaymentIdentity(payment.payload)).key
      const sale = aSale({ livemode: false, chain: "solana", network: req.network, paymentKey: `${req.network}:${key}`, payer: buyer.address, payTo: seller, amount: PRICE, asset: req.asset })
      expect(yield* sim.facilitator.status(sale)).toEqual({ _tag: "Unsettled" })
      const settlement = yield* sim.facilitator.settle(payment, req)
      expect(settlement.success).toBe(true)
      expect(yield* sim.facilitator.status(sale)).toEqual({ _tag: "Settled", transaction: settlement.transaction })
      const flipped = seller.replace(/[a-z]/, (c) => c.toUpperCase())
      for (const other of [{ ...sale, payTo: flipped }, { ...sale, amount: AtomicAmount.make(PRICE - 1n) }]) {
        expect(yield* sim.facilitator.status(other as typeof sale)).toEqual({ _tag: "Failed", reason: "transaction_does_not_pay_this_sale" })
      }
    }))
})

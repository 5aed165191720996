/*
 * The test twin's status read holds to the rule the chain readers follow: a used payment key settles a sale only
 * if its transfer paid the sale's amount from its payer to its payTo (the simulated ledger, like USDC, keys a
 * transfer by payer and nonce only).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeFacilitatorSimulated } from "../../../adapters/x402/FacilitatorSimulated.js"
import { AtomicAmount } from "../../../domain/Money.js"
import { aSale } from "../../../testing/Fixtures.js"
import { payEvm, PRICE, requirement, testBase } from "../x402/simulatedSupport.js"

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
})

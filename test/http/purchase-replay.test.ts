import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET, BASE_WALLET_2, call } from "../support/app.js"
import {
  CountedTestFacilitator,
  newCounts,
  resetCounts as resetCountsOf,
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  ClockSkew,
  expectGoods,
  expectNoGoods,
  expectProblemResponse,
  expectTestGoods,
  get,
  local,
  onlySale,
  paymentSignature,
  payWith,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  salesOf,
  sell,
  signEvm,
  signEvmByHand,
  unb64
} from "../support/purchase.js"

const SEPOLIA = "eip155:84532"

/**
 * How often the server asked the simulated facilitator to verify and to settle, and when the last settle
 * returned. The delays hold each call as a slow facilitator would, so copies of a payment overlap it.
 */
const counts = newCounts()
const CountedApp = () => PurchaseApp({}, CountedTestFacilitator(counts))

/** Each test starts counting from zero (the layers of this file share `counts`). */
const resetCounts = resetCountsOf(counts)

const newBuyer = () => privateKeyToAccount(generatePrivateKey())

layer(CountedApp(), REAL_TIME)("a replayed payment", (it) => {
  it.effect("the same PAYMENT-SIGNATURE twice: the second is 402 payment_already_used without goods or receipt link; one sale, settled once", () =>
    Effect.gen(function*() {
      yield* resetCounts
      const seller = yield* sell("replay@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const signature = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))

      const first = yield* payWith(seller.test, signature)
      expectTestGoods(yield* expectGoods(first))
      const receipt = unb64(first.headers.get("payment-response"))
      expect(receipt).toMatchObject({ success: true })

      // Every part of the settled payment is public on chain: presented again, it is no key to the goods.
      const second = yield* expectNoGoods(yield* payWith(seller.test, signature))
      expect(second.status).toBe(402)
      expect(unb64(second.headers.get("payment-required")).error).toBe("payment_already_used")
      expect(second.body).not.toContain(receiptOf(first))
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", transaction: receipt.transaction })
      expect(counts.settle).toBe(1)
    }))
})

// A layer of its own: each layer's fake code host lists the widget once.
layer(CountedApp(), REAL_TIME)("long after settlement", (it) => {
  it.effect("the payment is still no key to the goods (402 payment_already_used), and the receipt link still works", () =>
    Effect.gen(function*() {
      yield* resetCounts
      const seller = yield* sell("replay-window@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const signature = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))
      const first = yield* payWith(seller.test, signature)
      const firstBytes = yield* expectGoods(first)

      yield* Effect.flatMap(ClockSkew, (c) => c.advance(Duration.minutes(11)))
      const late = yield* expectNoGoods(yield* payWith(seller.test, signature))
      expect(late.status).toBe(402)
      expect(JSON.parse(late.body).error).toBe("payment_already_used")
      const again = yield* get(yield* local(receiptOf(first)))
      expect((yield* expectGoods(again)).equals(firstBytes)).toBe(true)
      expect(counts.settle).toBe(1)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
    }))
})

layer(CountedApp(), REAL_TIME)("a voided checkout", (it) => {
  it.effect("after a reprice, the old checkout is 410 and a payment for the old price is refused at the new one", () =>
    Effect.gen(function*() {
      yield* resetCounts
      const seller = yield* sell("voided@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const oldAccepted = acceptedOf(required, SEPOLIA)
      const buyer = newBuyer()
      const signedForOld = yield* signEvm(buyer, required, oldAccepted)

      const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { price_usd: "0.60" } })
      expect(repriced.status, repriced.text).toBe(200)
      const gone = yield* expectProblemResponse(yield* payWith(seller.test, signedForOld), 410, "checkout_gone")
      expect(gone.page).toMatch(/\/r\/Octo-Org\/Widget$/)

      const newTest = yield* local(repriced.json.test_checkout_url)
      const current = (yield* challenge(newTest)).required
      const newAccepted = acceptedOf(current, SEPOLIA)
      expect(newAccepted.amount).toBe("600000")
      // The old payment as it was made, then claiming the new terms while still signed for the old price.
      const refusedAsIs = yield* payWith(newTest, signedForOld)
      expect(refusedAsIs.status).toBe(402)
      expect(unb64(refusedAsIs.headers.get("payment-required")).error).toBe("requirements_mismatch")
      const relabelled = yield* payWith(newTest, paymentSignature(current, newAccepted, signedForOld.payload))
      expect(relabelled.status).toBe(402)
      expect(unb64(relabelled.headers.get("payment-required")).error).toBe("invalid_exact_evm_payload_authorization_value_mismatch")

      // Re-walleted: a payment to the old address is refused the same way.
      const signedForNew = yield* signEvm(buyer, current, newAccepted)
      const rewalleted = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { wallet_base: BASE_WALLET_2 } })
      expect(rewalleted.status, rewalleted.text).toBe(200)
      yield* expectProblemResponse(yield* payWith(newTest, signedForNew), 410, "checkout_gone")
      const latest = yield* local(rewalleted.json.test_checkout_url)
      const toOldWallet = yield* payWith(latest, signedForNew)
      expect(toOldWallet.status).toBe(402)
      expect(unb64(toOldWallet.headers.get("payment-required")).error).toBe("requirements_mismatch")
      const latestRequired = (yield* challenge(latest)).required
      const divertedClaim = paymentSignature(latestRequired, acceptedOf(latestRequired, SEPOLIA), signedForNew.payload)
      expect(divertedClaim.accepted.payTo).toBe(BASE_WALLET_2)
      const misdirected = yield* payWith(latest, divertedClaim)
      expect(misdirected.status).toBe(402)
      expect(unb64(misdirected.headers.get("payment-required")).error).toBe("invalid_exact_evm_recipient_mismatch")

      // Taken down: the current checkout is voided too.
      const hand = yield* signEvmByHand(buyer, acceptedOf(latestRequired, SEPOLIA))
      expect((yield* call("DELETE", "/repos/Octo-Org/Widget", { token: seller.key })).status).toBeLessThan(300)
      yield* expectProblemResponse(yield* payWith(latest, paymentSignature(latestRequired, acceptedOf(latestRequired, SEPOLIA), hand)), 410, "checkout_gone")

      expect(yield* salesOf(seller.accountId)).toEqual([])
      expect(counts.settle).toBe(0)
    }))
})

layer(CountedApp(), REAL_TIME)("50 concurrent copies of one payment", (it) => {
  it.effect("one copy gets the goods; every other copy 402 payment_already_used without a receipt link; one sale; settled once", () =>
    Effect.gen(function*() {
      yield* resetCounts
      const seller = yield* sell("concurrent@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const header = b64(yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA)))
      // Copies that arrive while the first is verified race it to record the sale; later ones find it settling.
      counts.verifyDelay = Duration.millis(200)
      counts.settleDelay = Duration.millis(300)

      const responses = yield* Effect.forEach(
        Array.from({ length: 50 }, () => header),
        (h) =>
          Effect.gen(function*() {
            const sentAt = Date.now()
            const res = yield* get(seller.test, { "payment-signature": h })
            const bytes = yield* bytesOf(res)
            return {
              sentAt,
              status: res.status,
              bytes,
              error: res.status === 402 ? unb64(res.headers.get("payment-required")).error : null,
              link: res.headers.get("link")
            }
          }),
        { concurrency: "unbounded" }
      )
      // The copies really overlapped the one settlement: they were all sent before it finished.
      expect(responses.filter((r) => r.sentAt < counts.settledAt)).toHaveLength(50)
      const paid = responses.filter((r) => r.status === 200)
      expect(paid).toHaveLength(1)
      expectTestGoods(paid[0]!.bytes)
      const others = responses.filter((r) => r.status !== 200)
      expect(others.map((r) => [r.status, r.error])).toEqual(Array(49).fill([402, "payment_already_used"]))
      for (const r of others) expect(r.link ?? "").not.toMatch(/rel="receipt"/)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", livemode: false })
      expect(counts.settle).toBe(1)
      // More than one copy got as far as verification, so the one-sale rule was decided by the ledger itself.
      expect(counts.verify).toBeGreaterThan(1)
    }))
})

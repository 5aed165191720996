import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { createSigner, decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchWithPaymentV1 } from "x402-fetch"
import { BASE_WALLET, BASE_WALLET_2 } from "../support/app.js"
import {
  challenge,
  expectGoods,
  expectTestGoods,
  onlySale,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  salesOf,
  sell,
  unb64,
  WIDGET_SHA
} from "../support/purchase.js"

const BASE_SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"

/** The official v2 client: @x402/fetch around an x402Client with the @x402/evm exact scheme. */
const v2Client = (buyer = privateKeyToAccount(generatePrivateKey())) => {
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
  return { buyer, client, pay: wrapFetchWithPayment(fetch, client) }
}

describe("test twin, official v2 client (@x402/fetch + @x402/evm)", () => {
  layer(PurchaseApp(), REAL_TIME)((it) => {
    it.effect("buys through the test twin: manifest and note, a test sale settled into the listing's wallet", () =>
      Effect.gen(function*() {
        // Seed rule 6: the wallet named on the listing wins over the account's default.
        const seller = yield* sell("seller@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET }, { wallet_base: BASE_WALLET_2 })
        const { required } = yield* challenge(seller.test)
        expect(required.accepts).toEqual([expect.objectContaining({
          scheme: "exact",
          network: "eip155:84532",
          amount: "500000",
          asset: BASE_SEPOLIA_USDC,
          payTo: BASE_WALLET,
          maxTimeoutSeconds: 300,
          extra: { name: "USDC", version: "2" }
        })])

        const { buyer, pay } = v2Client()
        const paid = yield* Effect.promise(() => pay(seller.test))
        const bytes = yield* expectGoods(paid)
        expect(receiptOf(paid)).toMatch(/^http:\/\/repomarket\.test\/downloads\/sale_[^>]+$/)
        const receipt = unb64(paid.headers.get("payment-response"))
        expect(receipt).toMatchObject({ success: true, network: "eip155:84532", payer: buyer.address })
        expect(receipt.transaction).toMatch(/^sim_0x[0-9a-f]{64}$/)
        expectTestGoods(bytes)

        const sale = yield* onlySale(seller.accountId)
        expect(sale).toMatchObject({
          livemode: false,
          status: "settled",
          chain: "base",
          network: "eip155:84532",
          asset: BASE_SEPOLIA_USDC,
          amount: 500_000n,
          payTo: BASE_WALLET,
          payer: buyer.address,
          commitSha: WIDGET_SHA,
          transaction: receipt.transaction,
          repo: "Octo-Org/Widget"
        })
        expect(sale.settledAt).toBeInstanceOf(Date)
      }))
  })
})

describe("test twin, a price above the client's default $1 cap", () => {
  layer(PurchaseApp(), REAL_TIME)((it) => {
    it.effect("the client refuses until its spend controls are raised; then the purchase completes", () =>
      Effect.gen(function*() {
        const seller = yield* sell("pricey@example.com", { price_usd: "2.50", wallet_base: BASE_WALLET })
        const { client, pay } = v2Client()

        const refused = yield* Effect.promise(() => pay(seller.test).then(() => null, (e: unknown) => e))
        expect(String(refused)).toMatch(/rejected by spendControls\.maxAmountPerPayment \(\$1/)
        expect(yield* salesOf(seller.accountId)).toEqual([])

        client.setSpendControls({ maxAmountPerPayment: "$5" })
        const paid = yield* Effect.promise(() => pay(seller.test))
        expectTestGoods(yield* expectGoods(paid))
        expect(unb64(paid.headers.get("payment-response"))).toMatchObject({ success: true })
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", livemode: false, amount: 2_500_000n, payTo: BASE_WALLET })
      }))
  })
})

describe("test twin, official v1 client (x402-fetch) on base-sepolia", () => {
  layer(PurchaseApp(), REAL_TIME)((it) => {
    it.effect("reads the v1 body, pays in X-PAYMENT and gets X-PAYMENT-RESPONSE with the goods", () =>
      Effect.gen(function*() {
        // x402 v1 clients sign validAfter = now - 600 s: the server's clock must be real time (it is).
        const seller = yield* sell("v1@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
        const { body } = yield* challenge(seller.test)
        expect(body).toMatchObject({
          x402Version: 1,
          accepts: [{ scheme: "exact", network: "base-sepolia", maxAmountRequired: "500000", payTo: BASE_WALLET, asset: BASE_SEPOLIA_USDC }]
        })

        // x402-fetch's own signer: a viem wallet client on Base Sepolia over a private-key account.
        const privateKey = generatePrivateKey()
        const signer = yield* Effect.promise(() => createSigner("base-sepolia", privateKey))
        const buyer = privateKeyToAccount(privateKey).address

        // Its default cap is 0.10 USDC: it refuses before paying anything.
        const capped = yield* Effect.promise(() => wrapFetchWithPaymentV1(fetch, signer)(seller.test).then(() => null, (e: unknown) => e))
        expect(String(capped)).toContain("Payment amount exceeds maximum allowed")
        expect(yield* salesOf(seller.accountId)).toEqual([])

        const paid = yield* Effect.promise(() => wrapFetchWithPaymentV1(fetch, signer, 500_000n)(seller.test))
        const bytes = yield* expectGoods(paid)
        expect(paid.headers.get("payment-response")).toBeNull()
        const receipt = decodeXPaymentResponse(paid.headers.get("x-payment-response")!)
        expect(receipt).toMatchObject({ success: true, network: "base-sepolia", payer: buyer })
        expect(receipt.transaction).toMatch(/^sim_0x[0-9a-f]{64}$/)
        expectTestGoods(bytes)

        expect(yield* onlySale(seller.accountId)).toMatchObject({
          livemode: false,
          status: "settled",
          network: "eip155:84532",
          amount: 500_000n,
          payTo: BASE_WALLET,
          payer: buyer,
          transaction: receipt.transaction
        })
      }))
  })
})

import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import { generateKeyPairSigner } from "@solana/kit"
import { x402Client } from "@x402/core/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { ExactSvmScheme } from "@x402/svm/exact/client"
import { Effect } from "effect"
import { BASE_WALLET, SOLANA_WALLET } from "../support/app.js"
import {
  b64,
  challenge,
  CountedTestFacilitator,
  expectGoods,
  expectNoGoods,
  get,
  newCounts,
  resetCounts,
  expectTestGoods,
  onlySale,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  sell,
  unb64,
  WIDGET_SHA
} from "../support/purchase.js"
import { SOLANA_RPC, solanaRpc } from "../adapters/x402/simulatedSupport.js"

const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
const DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"

// Only the Solana JSON-RPC is mocked (the client reads the test USDC mint); loopback calls to the app pass.
const rpcCalls: Array<string> = []
beforeAll(() => {
  solanaRpc.listen({ onUnhandledRequest: "bypass" })
  solanaRpc.events.on("request:start", ({ request }) => {
    if (request.url === SOLANA_RPC) rpcCalls.push(request.method)
  })
})
afterAll(() => solanaRpc.close())

describe("test twin, official @x402/svm client on Solana devnet", () => {
  layer(PurchaseApp(), REAL_TIME)((it) => {
    it.effect("buys through the test twin: manifest and note, a test sale settled into the listing's Solana wallet", () =>
      Effect.gen(function*() {
        const seller = yield* sell("sol@example.com", { price_usd: "0.25", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        const { required } = yield* challenge(seller.test)
        expect(required.accepts.map((a: { network: string }) => a.network)).toEqual(["eip155:84532", DEVNET])
        const offer = required.accepts[1]
        expect(offer).toMatchObject({ scheme: "exact", amount: "250000", asset: DEVNET_USDC, payTo: SOLANA_WALLET, maxTimeoutSeconds: 300 })
        expect(Object.keys(offer.extra).sort()).toEqual(["feePayer", "recentBlockhash"])

        const buyer = yield* Effect.promise(() => generateKeyPairSigner())
        const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: SOLANA_RPC }))
        const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.test))
        const bytes = yield* expectGoods(paid)
        expectTestGoods(bytes)
        expect(receiptOf(paid)).toMatch(/^http:\/\/repomarket\.test\/downloads\/sale_/)
        const receipt = unb64(paid.headers.get("payment-response"))
        expect(receipt).toMatchObject({ success: true, network: DEVNET, payer: buyer.address })
        expect(receipt.transaction).toMatch(/^sim_[1-9A-HJ-NP-Za-km-z]{86,88}$/)
        // The mint was read from the mocked RPC (and nothing else: the blockhash came from the requirement).
        expect(rpcCalls.length).toBeGreaterThan(0)

        expect(yield* onlySale(seller.accountId)).toMatchObject({
          livemode: false,
          status: "settled",
          chain: "solana",
          network: DEVNET,
          asset: DEVNET_USDC,
          amount: 250_000n,
          payTo: SOLANA_WALLET,
          payer: buyer.address,
          commitSha: WIDGET_SHA,
          transaction: receipt.transaction
        })
      }))
  })
})

const counts = newCounts()

describe("a settled Solana payment presented again", () => {
  layer(PurchaseApp({}, CountedTestFacilitator(counts)), REAL_TIME)((it) => {
    it.effect("the whole settled transaction replayed: 402 payment_already_used, no goods, no receipt link; with its signature broken: refused before the facilitator", () =>
      Effect.gen(function*() {
        yield* resetCounts(counts)
        const seller = yield* sell("sol-replay@example.com", { price_usd: "0.25", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        const buyer = yield* Effect.promise(() => generateKeyPairSigner())
        const sent: Array<string> = []
        const recording: typeof fetch = (input, init) => {
          const header = input instanceof Request ? input.headers.get("payment-signature") : null
          if (header !== null) sent.push(header)
          return fetch(input, init)
        }
        const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: SOLANA_RPC }))
        yield* expectGoods(yield* Effect.promise(() => wrapFetchWithPayment(recording, client)(seller.test)))
        expect(sent).toHaveLength(1)
        expect(counts).toMatchObject({ verify: 1, settle: 1 })

        const replayed = yield* expectNoGoods(yield* get(seller.test, { "payment-signature": sent[0]! }))
        expect(replayed.status).toBe(402)
        expect(unb64(replayed.headers.get("payment-required")).error).toBe("payment_already_used")

        // The buyer's signature (the second of the transaction) with one byte changed.
        const payment = unb64(sent[0]!)
        const wire = Buffer.from(payment.payload.transaction, "base64")
        wire[1 + 64 + 7] = wire[1 + 64 + 7]! ^ 0xff
        const broken = { ...payment, payload: { transaction: wire.toString("base64") } }
        const refused = yield* expectNoGoods(yield* get(seller.test, { "payment-signature": b64(broken) }))
        expect(refused.status).toBe(402)
        expect(unb64(refused.headers.get("payment-required")).error).toBe("invalid_exact_svm_payload_signature_invalid")

        expect(counts).toMatchObject({ verify: 1, settle: 1 })
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", chain: "solana" })
      }))
  })
})

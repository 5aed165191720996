/*
 * A payment already on the ledger never unlocks goods by itself: every part of a settled payment (payer,
 * nonce, amount, even the signature) is public on chain. A buyer whose answer was lost recovers with what only
 * the buyer holds: the receipt link, or the x402 `payment-identifier` id sent with the payment. All through
 * HTTP on the test twin, whose simulated facilitator really verifies signatures and is counted here.
 */
import { expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import type { PaymentPayload } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Duration, Effect } from "effect"
import { getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, BASE_WALLET_2, call, PUBLIC_REPO } from "../support/app.js"
import {
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  CountedTestFacilitator,
  expectGoods,
  expectNoGoods,
  expectProblemResponse,
  expectTestGoods,
  get,
  local,
  newCounts,
  newPaymentId,
  onlySale,
  paymentSignature,
  payWith,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  resetCounts,
  salesOf,
  sell,
  signEvm,
  signEvmByHand,
  unb64,
  WIDGET_SHA,
  withPaymentId
} from "../support/purchase.js"

const SEPOLIA = "eip155:84532"
const counts = newCounts()
const CountedApp = () => PurchaseApp({}, CountedTestFacilitator(counts))
const newBuyer = () => privateKeyToAccount(generatePrivateKey())

/** A purchase on the test twin with a fresh buyer (and, when given, a payment-identifier id); its first answer. */
const purchase = (url: string, id?: string, buyer = newBuyer()) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const accepted = acceptedOf(required, SEPOLIA)
    const plain = yield* signEvm(buyer, required, accepted)
    const signature = id === undefined ? plain : withPaymentId(plain, id)
    const first = yield* payWith(url, signature)
    return { buyer, required, accepted, signature, plain, first }
  })

layer(CountedApp(), REAL_TIME)("a stranger who read a settled payment off the chain", (it) => {
  it.effect("its from and nonce with a junk signature, another payee and value 1: no goods, no receipt link, no sale, no settle", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("stranger@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { accepted, first, required, signature } = yield* purchase(seller.test)
      yield* expectGoods(first)
      const authorization = (signature.payload as any).authorization
      const forged = paymentSignature(required, accepted, {
        signature: `0x${"11".repeat(65)}`,
        authorization: { ...authorization, to: getAddress(BASE_WALLET_2), value: "1" }
      })
      const answer = yield* expectNoGoods(yield* payWith(seller.test, forged))
      expect(answer.status).toBe(402)
      // And the same with the claimed requirement left as signed (only from and nonce are the buyer's).
      yield* expectNoGoods(yield* payWith(seller.test, paymentSignature(required, accepted, {
        signature: `0x${"22".repeat(65)}`,
        authorization
      })))
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("the complete settled payment presented again", (it) => {
  it.effect("by anyone, at once: 402 payment_already_used naming the three ways to recover; no receipt link, no second sale or settle", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("replayer@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { first, signature } = yield* purchase(seller.test)
      const receipt = receiptOf(first)
      yield* expectGoods(first)

      const again = yield* expectNoGoods(yield* payWith(seller.test, signature))
      expect(again.status).toBe(402)
      expect(unb64(again.headers.get("payment-required")).error).toBe("payment_already_used")
      const body = JSON.parse(again.body)
      expect(body.error).toBe("payment_already_used")
      expect(body.detail).toMatch(/receipt/i)
      expect(body.detail).toMatch(/payment-identifier/)
      expect(body.detail).toMatch(/Sign-In-With-X/)
      expect(again.body).not.toContain(receipt)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("a lost answer, recovered with the payment-identifier id", (it) => {
  it.effect("the same payment and id again: the same goods and receipt, one sale, one settle; the id is stored only as a keyed digest", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("lost@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { first, signature } = yield* purchase(seller.test, id)
      // The buyer never read this answer.
      const firstBytes = yield* bytesOf(first)
      expect(first.status).toBe(200)

      const retry = yield* payWith(seller.test, signature)
      const bytes = yield* expectGoods(retry)
      expectTestGoods(bytes)
      expect(bytes.equals(firstBytes)).toBe(true)
      expect(receiptOf(retry)).toBe(receiptOf(first))
      expect(unb64(retry.headers.get("payment-response"))).toEqual(unb64(first.headers.get("payment-response")))
      const sale = yield* onlySale(seller.accountId)
      expect(sale).toMatchObject({ status: "settled" })
      expect(sale.paymentIdDigest).toMatch(/^[0-9a-f]{64}$/)
      expect(JSON.stringify(sale, (_, v) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(id)
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("a fresh signature with the same id", (it) => {
  it.effect("the same payer, the same terms, a new nonce: the goods, never a second charge", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("fresh-sig@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { accepted, buyer, first, required } = yield* purchase(seller.test, id)
      yield* expectGoods(first)
      const fresh = withPaymentId(yield* signEvm(buyer, required, accepted), id)
      const retry = yield* payWith(seller.test, fresh)
      yield* expectGoods(retry)
      expect(receiptOf(retry)).toBe(receiptOf(first))
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("the same id with another payload", (it) => {
  it.effect("other terms, a junk signature, or another checkout: 409 payment_id_conflict and nothing recorded", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("conflict@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { accepted, buyer, first, required, signature } = yield* purchase(seller.test, id)
      yield* expectGoods(first)

      // Signed by the payer, but for another amount.
      const cheaper = paymentSignature(required, accepted, yield* signEvmByHand(buyer, accepted, { value: 400_000n }))
      yield* expectProblemResponse(yield* payWith(seller.test, withPaymentId(cheaper, id)), 409, "payment_id_conflict")
      // The payer's payment with a junk signature.
      const junk = { ...signature, payload: { ...(signature.payload as any), signature: `0x${"33".repeat(65)}` } }
      yield* expectProblemResponse(yield* payWith(seller.test, junk), 409, "payment_id_conflict")
      // After a reprice: a payment by the same payer for the new checkout's terms, with the old purchase's id.
      const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { price_usd: "0.60" } })
      expect(repriced.status, repriced.text).toBe(200)
      const newTest = yield* local(repriced.json.test_checkout_url)
      const current = (yield* challenge(newTest)).required
      const forNew = yield* signEvm(buyer, current, acceptedOf(current, SEPOLIA))
      yield* expectProblemResponse(yield* payWith(newTest, withPaymentId(forNew, id)), 409, "payment_id_conflict")
      // The first payment and id at the new checkout: it was made for the old one.
      yield* expectProblemResponse(yield* payWith(newTest, signature), 409, "payment_id_conflict")

      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("a stranger with the public payment and a made-up id", (it) => {
  it.effect("gets no goods: the id is not the buyer's; and the buyer's id with another payer's payment is a new purchase", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("made-up@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { first, plain } = yield* purchase(seller.test, id)
      yield* expectGoods(first)
      const answer = yield* expectNoGoods(yield* payWith(seller.test, withPaymentId(plain, newPaymentId())))
      expect(answer.status).toBe(402)
      expect(unb64(answer.headers.get("payment-required")).error).toBe("payment_already_used")
      expect(yield* salesOf(seller.accountId)).toHaveLength(1)
      expect(counts.settle).toBe(1)
      // Ids are per payer: the buyer's id with another payer's payment is no retry, just a new purchase.
      const other = yield* purchase(seller.test, id)
      yield* expectGoods(other.first)
      expect(receiptOf(other.first)).not.toBe(receiptOf(first))
      expect(yield* salesOf(seller.accountId)).toHaveLength(2)
      expect(counts.settle).toBe(2)
    }))
})

layer(CountedApp(), REAL_TIME)("a malformed payment-identifier id", (it) => {
  it.effect("is a 400 naming it, and changes nothing", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("malformed-id@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const signature = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))
      for (const bad of ["short", "x".repeat(129), "pay_has spaces_0123456789", "pay_ünïcödé_0123456789"]) {
        const problem = yield* expectProblemResponse(yield* payWith(seller.test, withPaymentId(signature, bad)), 400, "invalid_request")
        expect(JSON.stringify(problem)).toContain("payment-identifier")
        expect(JSON.stringify(problem)).not.toContain(bad)
      }
      expect(yield* salesOf(seller.accountId)).toEqual([])
      expect(counts.verify).toBe(0)
    }))
})

layer(CountedApp(), REAL_TIME)("the 402 advertises payment-identifier", (it) => {
  it.effect("in PAYMENT-REQUIRED extensions, not required, on the test checkout; the official client buys with it and recovers", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("advertised@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      expect(required.extensions?.["payment-identifier"]?.info).toEqual({ required: false })

      // The official v2 client with @x402/extensions' own helper adding an id; the header it sent is kept.
      const id = newPaymentId()
      const sent: Array<string> = []
      const recording: typeof fetch = (input, init) => {
        const header = input instanceof Request ? input.headers.get("payment-signature") : null
        if (header !== null) sent.push(header)
        return fetch(input, init)
      }
      const client = new x402Client().register("eip155:*", new ExactEvmScheme(newBuyer())).registerExtension({
        key: "payment-identifier",
        enrichPaymentPayload: async (payload: PaymentPayload) => ({
          ...payload,
          extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}), id)
        })
      })
      const paid = yield* Effect.promise(() => wrapFetchWithPayment(recording, client)(seller.test))
      yield* expectGoods(paid)
      expect(sent).toHaveLength(1)
      expect(unb64(sent[0]!).extensions["payment-identifier"].info.id).toBe(id)

      const retry = yield* get(seller.test, { "payment-signature": sent[0]! })
      yield* expectGoods(retry)
      expect(receiptOf(retry)).toBe(receiptOf(paid))
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("recovery after a reprice", (it) => {
  it.effect("the payment and id on the old checkout URL after PATCH: the goods of the pinned commit, no new sale or settle", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("reprice-recover@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { first, plain, signature } = yield* purchase(seller.test, id)
      expect(first.status).toBe(200)
      yield* bytesOf(first)
      const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { price_usd: "0.60" } })
      expect(repriced.status, repriced.text).toBe(200)
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...PUBLIC_REPO, headSha: "fedcba9876543210fedcba9876543210fedcba98" }))
      // Without the id the old checkout is gone.
      yield* expectProblemResponse(yield* payWith(seller.test, plain), 410, "checkout_gone")

      const retry = yield* payWith(seller.test, signature)
      const files = expectTestGoods(yield* expectGoods(retry))
      expect(JSON.parse(Object.entries(files).find(([p]) => p.endsWith("MANIFEST.json"))![1]).commit).toBe(WIDGET_SHA)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", commitSha: WIDGET_SHA })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("recovery after a takedown", (it) => {
  it.effect("the payment and id on the voided checkout: the goods; the receipt link still works", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("takedown-recover@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const id = newPaymentId()
      const { first, signature } = yield* purchase(seller.test, id)
      const firstBytes = yield* bytesOf(first)
      expect(first.status).toBe(200)
      expect((yield* call("DELETE", "/repos/Octo-Org/Widget", { token: seller.key })).status).toBe(204)

      const retry = yield* payWith(seller.test, signature)
      expect((yield* expectGoods(retry)).equals(firstBytes)).toBe(true)
      const again = yield* get(yield* local(receiptOf(first)))
      expect((yield* expectGoods(again)).equals(firstBytes)).toBe(true)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

layer(CountedApp(), REAL_TIME)("50 concurrent copies of one payment with its id", (it) => {
  it.effect("every copy gets 200 and the same goods (they carry the buyer's id); one sale; settled once", () =>
    Effect.gen(function*() {
      yield* resetCounts(counts)
      const seller = yield* sell("concurrent-id@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.test)
      const header = b64(withPaymentId(yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA)), newPaymentId()))
      counts.verifyDelay = Duration.millis(200)
      counts.settleDelay = Duration.millis(300)
      const responses = yield* Effect.forEach(
        Array.from({ length: 50 }, () => header),
        (h) =>
          Effect.gen(function*() {
            const sentAt = Date.now()
            const res = yield* get(seller.test, { "payment-signature": h })
            const bytes = yield* bytesOf(res)
            return { sentAt, status: res.status, bytes: bytes.toString("base64"), link: res.headers.get("link") }
          }),
        { concurrency: "unbounded" }
      )
      expect(responses.filter((r) => r.sentAt < counts.settledAt)).toHaveLength(50)
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200))
      expect(new Set(responses.map((r) => r.bytes)).size).toBe(1)
      expect(new Set(responses.map((r) => r.link)).size).toBe(1)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
      expect(counts.settle).toBe(1)
    }))
})

/*
 * Issue 12, finding 2 ("charged, nothing delivered, refused for ever"): a live settle that times out leaves
 * the sale pending; the reconciler resolves it from the chain. The facilitator and the chains' JSON-RPC
 * endpoints are msw (shaped after the public JSON-RPC docs: `eth_call` answering an ABI-encoded bool,
 * `eth_blockNumber`, `eth_getLogs`; Solana `getSignatureStatuses`); the webhook receiver is a real loopback
 * server; purchases go through the HTTP app.
 */
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Clock, Duration, Effect, Either, Layer, Option } from "effect"
import { delay, http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { makeSecretBox } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { keyRingOf } from "../../adapters/crypto/SecretKeys.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { pgliteEmbedded } from "../../adapters/sql/PgliteEmbedded.js"
import { solanaPaymentIdentity } from "../../adapters/solana/SolanaPayment.js"
import { generateKeyPairSigner } from "@solana/kit"
import { solanaPayload, standardHead } from "../support/solanaByHand.js"
import { type SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { PaymentFacilitator, type PaymentRequirement } from "../../ports/PaymentFacilitator.js"
import { decodePaymentHeader } from "../../codec/PaymentHeader.js"
import { AtomicAmount } from "../../domain/Money.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import type { StoragePorts } from "../../app/AppLayer.js"
import { ReconcileWorker } from "../../hosts/workers/ReconcileWorker.js"
import { call } from "../support/app.js"
import { chain, chainRpcHandlers, keyOf, landSolana, landTransfer, LATEST_BLOCK, resetChain } from "../support/chainRpc.js"
import {
  acceptedOf,
  b64,
  challenge,
  newPaymentId,
  PurchaseApp,
  REAL_TIME,
  signEvm,
  signEvmByHand,
  unb64,
  withPaymentId
} from "../support/purchase.js"
import { livePayment, newBuyer, problemOf, presentWithin } from "../faults/support.js"
import { receiver, sellerWithHook } from "../webhooks/support.js"
import { type Receiver } from "../webhooks/receiver.js"

const FACILITATOR = "https://facilitator.test"
// The keys in these URLs stand for a provider's API key: they must never show in a status, log or error.
const BASE_RPC = "https://base-rpc.test/v2/BASEKEY-0123456789"
const SOLANA_RPC = "https://solana-rpc.test/SOLKEY-0123456789"
const BASE = "eip155:8453"
const BASE_SEPOLIA = "eip155:84532"
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
const SOLANA_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
const TX = "0x5e77edbef0a1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b"

let settleCalls = 0
const server = setupServer(
  http.post(`${FACILITATOR}/verify`, async ({ request }) => {
    const body: any = await request.json()
    return HttpResponse.json({ isValid: true, payer: body?.paymentPayload?.payload?.authorization?.from })
  }),
  // Every settle hangs: the app's 500 ms limit cuts it off, so its outcome is unknown.
  http.post(`${FACILITATOR}/settle`, async () => {
    settleCalls++
    await delay("infinite")
    return HttpResponse.json({})
  }),
  ...chainRpcHandlers(BASE_RPC, SOLANA_RPC)
)
beforeAll(() => server.listen({ onUnhandledRequest: "bypass" }))
afterEach(() => {
  server.resetHandlers()
  resetChain()
})
afterAll(() => server.close())

const LIVE = {
  X402_FACILITATOR_URL: FACILITATOR,
  X402_FACILITATOR_TIMEOUT_MS: "500",
  BASE_RPC_URL: BASE_RPC,
  SOLANA_RPC_URL: SOLANA_RPC,
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true"
}

/** The purchase app plus the reconciler and the webhook delivery use cases over the same ports. */
const ReconcilingApp = (
  config: Record<string, string> = LIVE,
  storage?: Layer.Layer<StoragePorts, unknown>,
  keys?: Layer.Layer<SecretBox>
) =>
  Layer.mergeAll(Webhooks.Default, Reconciler.Default.pipe(Layer.provide(Settlements.Default))).pipe(
    Layer.provideMerge(PurchaseApp(storage === undefined ? { config } : { config, storage }, keys))
  )

/** The live clock moved by `ms`: how the reconciler sees a later moment. */
const shifted = (ms: number): Clock.Clock => {
  const live = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + ms,
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + BigInt(ms) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + ms),
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + BigInt(ms) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
}

/** One reconciler pass (no grace: the sales here are seconds old), `laterMs` from now. */
const reconcile = (laterMs = 0) =>
  Effect.flatMap(Reconciler, (r) => r.reconcilePending({ grace: Duration.zero, limit: 100 })).pipe(
    Effect.withClock(shifted(laterMs))
  )

/** Delivery passes until nothing is due. */
const drain = Effect.gen(function*() {
  const webhooks = yield* Webhooks
  while ((yield* webhooks.deliverDue()) > 0);
})

const onlyLedgerSale = (accountId: string) =>
  Effect.map(Effect.flatMap(SaleLedger, (l) => l.listByAccount(accountId as any, { limit: 100 })), (page) => {
    expect(page.sales).toHaveLength(1)
    return page.sales[0]!
  })

/** A live Base purchase whose settle times out: 503 settlement_pending, the sale pending. */
const purchaseWithUnknownOutcome = (email: string, hook: Receiver, validForSeconds?: number, paymentId?: string) =>
  Effect.gen(function*() {
    const seller = yield* sellerWithHook(email, hook)
    const buyer = newBuyer()
    let signature: any
    let authorization: { from: string; to: string; value: string; nonce: string; validBefore: string }
    if (validForSeconds === undefined) {
      const p = yield* livePayment(seller.live, buyer)
      signature = p.signature
      authorization = (p.signature.payload as any).authorization
    } else {
      const { required } = yield* challenge(seller.live)
      const accepted = acceptedOf(required, BASE)
      const payload = yield* signEvmByHand(buyer, accepted, { validBefore: BigInt(Math.floor(Date.now() / 1000) + validForSeconds) })
      signature = { x402Version: 2, resource: required.resource, accepted, payload }
      authorization = payload.authorization
    }
    if (paymentId !== undefined) signature = withPaymentId(signature, paymentId)
    const answer = yield* presentWithin(seller.live, signature)
    problemOf(answer, 503, "settlement_pending")
    const sale = yield* onlyLedgerSale(seller.accountId)
    expect(sale).toMatchObject({ status: "pending", transaction: null, livemode: true, network: BASE })
    return { seller, buyer, signature, authorization, sale }
  })

/** `GET /my/sales` rows of the seller. */
const mySales = (key: string) =>
  Effect.map(call("GET", "/my/sales", { token: key }), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.json.sales as Array<{ id: string; status?: string; transaction: string | null; webhook: { status: string; attempts: number } }>
  })

describe("Base: a settle that timed out, and the chain says the authorization was used", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the reconciler settles the sale with the transaction from the AuthorizationUsed log; its webhook goes out exactly once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, sale, seller } = yield* purchaseWithUnknownOutcome("recon-used@example.com", hook)
        expect((yield* mySales(seller.key)).filter((s) => s.id === sale.id && s.status === "settled")).toEqual([])

        // The facilitator did settle after all: the authorization is used on chain, 1 234 blocks ago.
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 1_234n })
        const first = yield* reconcile()
        expect(first).toMatchObject({ checked: 1, settled: 1, failed: 0, pending: 0, errors: 0 })
        expect(chain.calls).toEqual(expect.arrayContaining(["base:eth_call", "base:eth_blockNumber", "base:eth_getLogs"]))

        // Twice more, two at once: the sale is no longer pending, nothing moves, no second event.
        const again = yield* Effect.all([reconcile(), reconcile()], { concurrency: 2 })
        expect(again.map((s) => s.checked)).toEqual([0, 0])
        const settled = yield* onlyLedgerSale(seller.accountId)
        expect(settled).toMatchObject({ id: sale.id, status: "settled", transaction: TX, payer: authorization.from })
        expect(settled.settledAt).not.toBeNull()

        yield* drain
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
        const event = JSON.parse(hook.arrivals[0]!.rawBody)
        expect(event).toMatchObject({ type: "sale.settled", livemode: true, data: { sale_id: sale.id, transaction: TX, network: BASE } })

        const rows = yield* mySales(seller.key)
        expect(rows.filter((r) => r.id === sale.id)).toEqual([
          expect.objectContaining({ id: sale.id, transaction: TX, webhook: expect.objectContaining({ status: "delivered", attempts: 1 }) })
        ])
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("a pass racing a second pass over the same pending sale queues one event", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, sale, seller } = yield* purchaseWithUnknownOutcome("recon-race@example.com", hook)
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK })
        const raced = yield* Effect.all([reconcile(), reconcile(), reconcile()], { concurrency: 3 })
        expect(raced.reduce((n, s) => n + s.checked, 0)).toBeGreaterThanOrEqual(1)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "settled", transaction: TX })
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }))
  })
})

describe("the buyer's retry: what only the buyer holds recovers a sale whose settle had no answer", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("settled on chain: the retry with its payment-identifier resolves the sale itself and gets the goods, without a second settle; the webhook goes out once; the bare payment gets nothing", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const id = newPaymentId()
        const { authorization, sale, seller, signature } = yield* purchaseWithUnknownOutcome("recon-retry@example.com", hook, undefined, id)
        const settlesBefore = settleCalls
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 7n })

        // The same payment and id again, before any reconciler pass: the retry asks the chain itself.
        const retry = yield* presentWithin(seller.live, signature)
        expect(retry.status, retry.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(retry.headers.get("content-type")).toBe("application/gzip")
        expect(retry.headers.get("link")).toMatch(/rel="receipt"/)
        expect(retry.body.length).toBeGreaterThan(0)
        expect(settleCalls).toBe(settlesBefore)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "settled", transaction: TX })

        // Then the reconciler finds nothing to do; the webhook went out once.
        expect(yield* reconcile()).toMatchObject({ checked: 0 })
        yield* drain
        yield* drain
        expect(hook.arrivals).toHaveLength(1)

        // Anyone else who read the payment off the chain, without the id, gets nothing.
        const bare = { ...signature, extensions: undefined }
        const stranger = yield* presentWithin(seller.live, bare)
        expect(stranger.status).toBe(402)
        expect(stranger.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        expect(stranger.headers.get("content-type")).not.toBe("application/gzip")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "settled" })
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("never settled: after validBefore the sale ends failed and the retry with its id gets a 402, no goods", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const id = newPaymentId()
        const { sale, seller, signature } = yield* purchaseWithUnknownOutcome("recon-retry-unused@example.com", hook, 20, id)
        // While it may still settle, the retry is told to come back, never given goods.
        const early = yield* presentWithin(seller.live, signature)
        problemOf(early, 503, "settlement_pending")
        expect(early.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)

        expect(yield* reconcile(sale.settleBy!.getTime() - Date.now() + 61_000)).toMatchObject({ checked: 1, failed: 1 })
        const late = yield* presentWithin(seller.live, signature)
        expect(late.status).toBe(402)
        expect(late.headers.get("content-type")).not.toBe("application/gzip")
        expect(late.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "not_settled_before_expiry" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })
})

describe("Base: a settle that timed out, and the payment did not settle", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the sale stays pending while the authorization's validBefore has not passed, ends failed once it has; nothing is delivered", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { sale, seller } = yield* purchaseWithUnknownOutcome("recon-unused@example.com", hook, 20)
        const settleBy = sale.settleBy!.getTime()
        expect(settleBy - Date.now()).toBeLessThanOrEqual(20_000)

        expect(yield* reconcile()).toMatchObject({ checked: 1, pending: 1, failed: 0 })
        // Just past validBefore an RPC node may still lag the chain: still pending for a minute.
        expect(yield* reconcile(settleBy - Date.now() + 30_000)).toMatchObject({ checked: 1, pending: 1 })
        expect((yield* onlyLedgerSale(seller.accountId)).status).toBe("pending")

        expect(yield* reconcile(settleBy - Date.now() + 61_000)).toMatchObject({ checked: 1, failed: 1 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "not_settled_before_expiry", transaction: null })
        expect(yield* reconcile(3_600_000)).toMatchObject({ checked: 0 })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
        expect((yield* mySales(seller.key)).filter((r) => r.id === sale.id && r.status === "settled")).toEqual([])
      }))
  })
})

describe("Base: the facilitator refuses the settle, but someone else submitted the authorization first", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the chain shows the transfer: the sale is settled with that transaction and the buyer gets the goods, not 'failed'", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-frontrun@example.com", hook)
        const buyer = newBuyer()
        const p = yield* livePayment(seller.live, buyer)
        const authorization = (p.signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
        const { from } = authorization
        // A watcher of the mempool submitted the signed authorization before the facilitator's own transfer.
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 1n })
        server.use(http.post(`${FACILITATOR}/settle`, () =>
          HttpResponse.json({ success: false, errorReason: "invalid_exact_evm_payload_authorization_nonce_used", transaction: "", network: BASE, payer: from }, { status: 400 })))

        const answer = yield* presentWithin(seller.live, p.signature)
        expect(answer.status, answer.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(answer.headers.get("content-type")).toBe("application/gzip")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "settled", transaction: TX, payer: from })
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the chain shows no transfer: the buyer gets 402 with the refusal, nothing is delivered, the sale stays pending with the refusal noted until validBefore has passed, then fails with it", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-refused@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        server.use(http.post(`${FACILITATOR}/settle`, () =>
          HttpResponse.json({ success: false, errorReason: "insufficient_funds", transaction: "", network: BASE }, { status: 400 })))
        const answer = yield* presentWithin(seller.live, p.signature)
        expect(answer.status).toBe(402)
        expect(answer.headers.get("content-type")).not.toBe("application/gzip")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending", failureReason: "insufficient_funds" })
        expect(chain.calls).toContain("base:eth_call")
        expect(yield* reconcile()).toMatchObject({ checked: 1, pending: 1 })
        expect(yield* reconcile(3_600_000)).toMatchObject({ checked: 1, failed: 1 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "insufficient_funds" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })
})

describe("Base: the facilitator broadcast the transfer and answered settlement_pending before its receipt (issue 39)", () => {
  const BROADCAST = "0x9a1d3c5e7f90b2d4f6a8c0e2b4d6f8a0c2e4f6a8b0d2f4a6c8e0a2c4e6f8a0b2" as const
  const pendingAnswer = (payer: string) =>
    http.post(`${FACILITATOR}/settle`, () => {
      settleCalls++
      return HttpResponse.json({ success: false, errorReason: "settlement_pending", errorMessage: "receipt not seen within 5 s", transaction: BROADCAST, network: BASE, payer })
    })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the sale stays pending (503 + Retry-After, never 'failed'); the buyer's retry after finality gets the goods; the seller's ledger shows it settled with that transaction, and its live total is what the wallet received", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-pending@example.com", hook)
        const buyer = newBuyer()
        const p = yield* livePayment(seller.live, buyer)
        const signature = withPaymentId(p.signature, newPaymentId())
        const authorization = (signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
        server.use(pendingAnswer(authorization.from))
        const settlesBefore = settleCalls

        // Answered before the transfer is mined: no refusal, the money is on its way.
        const first = yield* presentWithin(seller.live, signature)
        const problem = problemOf(first, 503, "settlement_pending")
        expect(Number(first.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(JSON.stringify(problem)).not.toMatch(/could not be settled|nothing was delivered|nothing was charged/i)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending", failureReason: null })
        // The reconciler leaves it pending while nothing is on chain and validBefore has not passed; the seller's
        // ledger (settled sales only) does not show it yet.
        expect(yield* reconcile()).toMatchObject({ checked: 1, pending: 1, failed: 0 })
        expect((yield* call("GET", "/my/sales?livemode=true", { token: seller.key })).json.sales).toHaveLength(0)

        // Mined, not final yet: still pending for the buyer's retry.
        landTransfer(authorization, { tx: BROADCAST, block: LATEST_BLOCK - 2n })
        chain.finalized = LATEST_BLOCK - 10n
        problemOf(yield* presentWithin(seller.live, signature), 503, "settlement_pending")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending" })

        // Final: the buyer's retry (same payment, same id) gets the goods, without a second settle.
        chain.finalized = LATEST_BLOCK
        const retry = yield* presentWithin(seller.live, signature)
        expect(retry.status, retry.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(retry.headers.get("content-type")).toBe("application/gzip")
        expect(retry.headers.get("link")).toMatch(/rel="receipt"/)
        expect(unb64(retry.headers.get("payment-response"))).toMatchObject({ success: true, transaction: BROADCAST })
        expect(settleCalls - settlesBefore).toBe(1)

        // The seller's ledger of record: settled with the broadcast transaction; the live total is the transfer.
        const ledger = yield* call("GET", "/my/sales?livemode=true", { token: seller.key })
        expect(ledger.status).toBe(200)
        expect(ledger.json.sales).toHaveLength(1)
        expect(ledger.json.sales[0]).toMatchObject({ transaction: BROADCAST, payer: authorization.from, livemode: true, amount: authorization.value })
        const received = [...chain.used.values()].filter((t) => t.to.toLowerCase() === authorization.to.toLowerCase()).reduce((n, t) => n + t.value, 0n)
        expect(received).toBe(BigInt(authorization.value))
        expect(ledger.json.totals).toEqual([expect.objectContaining({ chain: "base", livemode: true, amount: received.toString(), count: 1 })])
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("without the buyer coming back, the reconciler settles it once final, and the webhook goes out once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-pending-reconciler@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        const authorization = (p.signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
        server.use(pendingAnswer(authorization.from))
        problemOf(yield* presentWithin(seller.live, p.signature), 503, "settlement_pending")
        landTransfer(authorization, { tx: BROADCAST, block: LATEST_BLOCK - 1n })
        expect(yield* reconcile()).toMatchObject({ checked: 1, settled: 1 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "settled", transaction: BROADCAST })
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("a refusal that still names the broadcast transaction (400 invalid_transaction_state, as the official facilitator answers when it cannot remember the broadcast) is pending too, and settles once the chain shows it", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-broadcast-refused@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        const authorization = (p.signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
        server.use(http.post(`${FACILITATOR}/settle`, () =>
          HttpResponse.json({ success: false, errorReason: "invalid_transaction_state", transaction: BROADCAST, network: BASE, payer: authorization.from }, { status: 400 })))
        problemOf(yield* presentWithin(seller.live, p.signature), 503, "settlement_pending")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending" })
        landTransfer(authorization, { tx: BROADCAST, block: LATEST_BLOCK - 1n })
        expect(yield* reconcile()).toMatchObject({ checked: 1, settled: 1 })
      }))
  })
})

describe("Base: a refused settle whose authorization the payer submits later (a failed sale is never a dead end)", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("402 with the refusal in words; the transfer lands before validBefore: the reconciler settles the sale, the buyer's retry with its id gets the goods, the webhook goes out once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("recon-late-landing@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        const signature = withPaymentId(p.signature, newPaymentId())
        const authorization = (signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
        server.use(http.post(`${FACILITATOR}/settle`, () =>
          HttpResponse.json({ success: false, errorReason: "invalid_exact_evm_transaction_simulation_failed", transaction: "", network: BASE, payer: authorization.from }, { status: 400 })))
        const refused = yield* presentWithin(seller.live, signature)
        expect(refused.status).toBe(402)
        expect(refused.body.toString("utf8")).toContain("the USDC contract refused this transfer")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending", failureReason: "invalid_exact_evm_transaction_simulation_failed" })

        // The payer (or anyone holding the signed authorization) submits it later, before it expires.
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 1n })
        expect(yield* reconcile()).toMatchObject({ checked: 1, settled: 1 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "settled", transaction: TX, failureReason: null })
        const retry = yield* presentWithin(seller.live, signature)
        expect(retry.status, retry.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(retry.headers.get("content-type")).toBe("application/gzip")
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }))
  })
})

describe("Base: the payer cancels the authorization after a settle that had no answer", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("a used nonce without its transfer is no payment: never settled, no goods for the id, failed (authorization_canceled) once the cancellation is final; no webhook", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const id = newPaymentId()
        const { authorization, sale, seller, signature } = yield* purchaseWithUnknownOutcome("recon-cancel@example.com", hook, 20, id)
        // cancelAuthorization marks the nonce used (authorizationState is true) and moves no money; its block
        // is not final yet.
        chain.canceled.set(keyOf(authorization.from, authorization.nonce), { tx: TX, block: LATEST_BLOCK - 3n })
        chain.finalized = LATEST_BLOCK - 10n

        expect(yield* reconcile()).toMatchObject({ checked: 1, settled: 0, pending: 1 })
        const retry = yield* presentWithin(seller.live, signature)
        problemOf(retry, 503, "settlement_pending")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "pending" })

        // Final: the sale can never settle, so it fails at once (not only after validBefore), with the reason.
        chain.finalized = LATEST_BLOCK
        expect(yield* reconcile()).toMatchObject({ checked: 1, failed: 1 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_canceled", transaction: null })
        const late = yield* presentWithin(seller.live, signature)
        expect(late.status).toBe(402)
        expect(unb64(late.headers.get("payment-response"))).toMatchObject({ success: false, errorReason: "authorization_canceled" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("a used nonce whose transfer log cannot be found stays pending (unknown), never settled on the nonce alone", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, sale, seller } = yield* purchaseWithUnknownOutcome("recon-nolog@example.com", hook, 20)
        // Used, but the transfer is older than the blocks searched: nobody here can tell transfer from cancel.
        landTransfer(authorization, { tx: TX, block: 1n })
        expect(yield* reconcile(3_600_000)).toMatchObject({ checked: 1, pending: 1, settled: 0, failed: 0 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "pending" })
      }))
  })
})

/**
 * Finding 1 of issue 27: an EIP-3009 nonce is unique per payer only. The buyer signs A1 (the checkout's: to the
 * seller, the price, nonce N) and A2 (nonce N, to a wallet of its own) and gets A2 on chain between the
 * facilitator's verify and settle. The settle of A1 is refused (nonce used); the chain shows the nonce used and
 * an AuthorizationUsed(from, N) log — A2's. The seller received nothing: no goods, no settled sale, no webhook.
 */
const nonceTwin = (authorization: { from: string; to: string; value: string; nonce: string }, change: { to?: string; value?: bigint } = {}) => ({
  ...authorization,
  to: change.to ?? newBuyer().address,
  value: String(change.value ?? BigInt(authorization.value))
})
const TWIN_TX = "0x7e1a000000000000000000000000000000000000000000000000000000000001" as const

describe("Base: a nonce twin — the payer spent the checkout's nonce on another authorization of its own", () => {
  const refusedSettle = () =>
    server.use(http.post(`${FACILITATOR}/settle`, async ({ request }) => {
      const body: any = await request.json()
      const from = body?.paymentPayload?.payload?.authorization?.from
      return HttpResponse.json({ success: false, errorReason: "invalid_exact_evm_payload_authorization_nonce_used", transaction: "", network: BASE, payer: from }, { status: 400 })
    }))

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the purchase whose settle is refused: 402 with the reason, no goods, no receipt link, the sale failed (not a sale on the ledger), no webhook", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("twin-purchase@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        const a1 = (p.signature.payload as any).authorization
        // A2 lands after verify, before settle: same payer, same nonce, to the buyer's second wallet.
        landTransfer(nonceTwin(a1), { tx: TWIN_TX, block: LATEST_BLOCK - 2n })
        refusedSettle()

        const answer = yield* presentWithin(seller.live, p.signature)
        expect(answer.status, answer.body.toString("utf8").slice(0, 300)).toBe(402)
        expect(answer.headers.get("content-type")).not.toBe("application/gzip")
        expect(answer.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        expect(unb64(answer.headers.get("payment-response"))).toMatchObject({ success: false, errorReason: "authorization_used_for_another_transfer" })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_used_for_another_transfer", transaction: null })
        expect(chain.calls).toContain("base:eth_getTransactionReceipt")
        expect((yield* mySales(seller.key)).filter((r) => r.status === "settled")).toEqual([])
        yield* drain
        expect(hook.arrivals).toHaveLength(0)

        // Presented again, with or without anything else: never goods.
        const again = yield* presentWithin(seller.live, p.signature)
        expect(again.status).toBe(402)
        expect(again.headers.get("content-type")).not.toBe("application/gzip")
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the twin's block not final yet: the purchase answers 503 settlement_pending (never goods); once final, the reconciler fails the sale", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("twin-unfinal@example.com", hook)
        const p = yield* livePayment(seller.live, newBuyer())
        landTransfer(nonceTwin((p.signature.payload as any).authorization), { tx: TWIN_TX, block: LATEST_BLOCK - 2n })
        chain.finalized = LATEST_BLOCK - 100n
        refusedSettle()

        const answer = yield* presentWithin(seller.live, p.signature)
        problemOf(answer, 503, "settlement_pending")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending" })
        expect(yield* reconcile()).toMatchObject({ checked: 1, pending: 1 })

        chain.finalized = LATEST_BLOCK
        expect(yield* reconcile()).toMatchObject({ checked: 1, failed: 1, settled: 0 })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_used_for_another_transfer" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the buyer's retry with its payment-identifier after a settle with no answer: no goods, the sale failed with the reason", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, seller, signature } = yield* purchaseWithUnknownOutcome("twin-retry@example.com", hook, undefined, newPaymentId())
        landTransfer(nonceTwin(authorization), { tx: TWIN_TX, block: LATEST_BLOCK - 2n })

        const retry = yield* presentWithin(seller.live, signature)
        expect(retry.status).toBe(402)
        expect(retry.headers.get("content-type")).not.toBe("application/gzip")
        expect(retry.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        expect(unb64(retry.headers.get("payment-response"))).toMatchObject({ success: false, errorReason: "authorization_used_for_another_transfer" })
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_used_for_another_transfer" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the reconciler: a twin to another wallet fails the sale with the reason; no webhook", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const elsewhere = yield* purchaseWithUnknownOutcome("twin-recon@example.com", hook)
        landTransfer(nonceTwin(elsewhere.authorization), { tx: TWIN_TX, block: LATEST_BLOCK - 2n })
        expect(yield* reconcile()).toMatchObject({ checked: 1, failed: 1, settled: 0 })
        expect(yield* onlyLedgerSale(elsewhere.seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_used_for_another_transfer", transaction: null })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the reconciler: a twin to the seller for one unit less fails the sale too", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const less = yield* purchaseWithUnknownOutcome("twin-recon-less@example.com", hook)
        const a = less.authorization
        landTransfer(nonceTwin(a, { to: a.to, value: BigInt(a.value) - 1n }), { tx: TWIN_TX, block: LATEST_BLOCK - 2n })
        expect(yield* reconcile()).toMatchObject({ checked: 1, failed: 1 })
        expect(yield* onlyLedgerSale(less.seller.accountId)).toMatchObject({ status: "failed", failureReason: "authorization_used_for_another_transfer" })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the real transfer, not yet final: pending (the buyer's retry is told to come back), settled once final", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, seller, signature } = yield* purchaseWithUnknownOutcome("twin-real-unfinal@example.com", hook, undefined, newPaymentId())
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 2n })
        chain.finalized = LATEST_BLOCK - 3n
        expect(yield* reconcile()).toMatchObject({ checked: 1, pending: 1 })
        problemOf(yield* presentWithin(seller.live, signature), 503, "settlement_pending")
        chain.finalized = LATEST_BLOCK - 2n
        const retry = yield* presentWithin(seller.live, signature)
        expect(retry.status).toBe(200)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "settled", transaction: TX })
      }))
  })
})

describe("Base: nobody can tell", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the RPC endpoint is down: the sale stays pending (never failed, never settled), even long past validBefore; the URL's key shows nowhere", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { sale, seller } = yield* purchaseWithUnknownOutcome("recon-down@example.com", hook, 20)
        chain.down = true
        expect(yield* reconcile(3_600_000)).toMatchObject({ checked: 1, pending: 1, settled: 0, failed: 0, errors: 0 })
        expect(chain.calls).toContain("base:eth_call")
        const facilitator = Option.getOrThrow((yield* PaymentFacilitator).live)
        const status = yield* facilitator.status(sale)
        expect(status._tag).toBe("Unknown")
        expect(JSON.stringify(status)).not.toContain("BASEKEY")
        expect(JSON.stringify(status)).not.toContain("base-rpc.test")
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending", failureReason: null, transaction: null })
        yield* drain
        expect(hook.arrivals).toHaveLength(0)
      }))
  })

  layer(ReconcilingApp({ ...LIVE, BASE_RPC_URL: "off" }), REAL_TIME)((it) => {
    it.scoped("BASE_RPC_URL=off: the sale stays pending for an operator, and no RPC is called", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, seller } = yield* purchaseWithUnknownOutcome("recon-off@example.com", hook, 20)
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK })
        expect(yield* reconcile(3_600_000)).toMatchObject({ checked: 1, pending: 1 })
        expect(chain.calls).toEqual([])
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ status: "pending", failureReason: null })
      }))
  })
})

describe("a restart between the timed-out settle and the reconciler loses nothing", () => {
  {
    it.scopedLive("the pending sale is durable (PGlite); a fresh app over the same database settles it and delivers its webhook once", () =>
      Effect.gen(function*() {
        const dataDir = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-recon-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        const storage = () => StorageSql.pipe(Layer.provide(pgliteEmbedded({ dataDir })))
        // Both instances open secrets at rest (the webhook secret) with the same keys, as a restarted server does.
        const keys = Layer.succeed(SecretBox, makeSecretBox(keyRingOf([{ kid: "restart", key: randomBytes(32) }])))
        const hook = yield* receiver()

        // First instance: the purchase whose settle times out, then the instance stops.
        const first = yield* purchaseWithUnknownOutcome("recon-restart@example.com", hook).pipe(
          Effect.provide(ReconcilingApp(LIVE, storage(), keys))
        )
        landTransfer(first.authorization, { tx: TX, block: LATEST_BLOCK - 9_000n })

        // Second instance over the same data directory.
        yield* Effect.gen(function*() {
          expect(yield* onlyLedgerSale(first.seller.accountId)).toMatchObject({ id: first.sale.id, status: "pending" })
          expect(yield* reconcile()).toMatchObject({ checked: 1, settled: 1 })
          expect(yield* reconcile()).toMatchObject({ checked: 0 })
          expect(yield* onlyLedgerSale(first.seller.accountId)).toMatchObject({ id: first.sale.id, status: "settled", transaction: TX })
          yield* drain
          expect(hook.arrivals).toHaveLength(1)
          expect(JSON.parse(hook.arrivals[0]!.rawBody)).toMatchObject({ data: { sale_id: first.sale.id, transaction: TX } })
        }).pipe(Effect.provide(ReconcilingApp(LIVE, storage(), keys)))
      }), { timeout: 120_000 })
  }
})

/**
 * A pending live Solana sale as a purchase records it: the buyer signed a real `exact` payment transaction
 * (fee payer's slot empty), and the sale's payment key is the buyer's signature, not the transaction's id.
 */
const solanaSale = (accountId: string, listingFrom: Sale, options: { readonly createdAgoMs?: number; readonly settleInMs?: number } = {}) =>
  Effect.gen(function*() {
    const buyer = yield* Effect.promise(() => generateKeyPairSigner())
    const feePayer = yield* Effect.promise(() => generateKeyPairSigner())
    const accepted = {
      scheme: "exact",
      network: SOLANA,
      asset: SOLANA_USDC,
      amount: String(listingFrom.amount),
      payTo: SOLANA_PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { feePayer: feePayer.address }
    } as any
    const payload = yield* solanaPayload(buyer, accepted, yield* standardHead(buyer, accepted))
    const identity = Either.getOrThrow(solanaPaymentIdentity(payload))
    const createdAt = new Date(Date.now() - (options.createdAgoMs ?? 120_000))
    const sale = new Sale({
      ...listingFrom,
      id: `sale_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex")}` as SaleId,
      paymentKey: `${SOLANA}:${identity.key}`,
      chain: "solana",
      network: SOLANA,
      asset: SOLANA_USDC,
      payTo: SOLANA_PAY_TO,
      payer: buyer.address,
      accountId: accountId as any,
      transaction: null,
      status: "pending",
      failureReason: null,
      createdAt,
      settledAt: null,
      settleBy: new Date(createdAt.getTime() + (options.settleInMs ?? 300_000))
    })
    yield* (yield* SaleLedger).recordPending(sale)
    return { sale, payload, buyer, accepted }
  })

const SOLANA_PAY_TO = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
const saleNow = (id: SaleId) => Effect.map(Effect.flatMap(SaleLedger, (l) => l.findById(id)), Option.getOrThrow)

describe("Solana: a sale's transaction is found by the buyer's signature, though the RPC knows it only by its first (the fee payer's)", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("landed and finalized: settled with the transaction's id, never failed past settleBy; its webhook goes out once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        // A Base sale of the seller gives the listing and checkout the Solana sales are recorded against.
        const { seller, sale: base } = yield* purchaseWithUnknownOutcome("recon-sol@example.com", hook, 20)
        const paid = yield* solanaSale(seller.accountId, base)
        const unseen = yield* solanaSale(seller.accountId, base)
        // Another transaction of the same payer in the window: listed for its address, not the sale's.
        const other = yield* solanaSale(seller.accountId, base)
        landSolana({ transaction: (yield* solanaPayload(paid.buyer, other.accepted, yield* standardHead(paid.buyer, { ...other.accepted, amount: "1" }))).transaction })
        const id = landSolana(paid.payload)
        expect(paid.sale.paymentKey).not.toContain(id)

        // Past settleBy (+ the margin) the old reader, asking getSignatureStatuses for the buyer's signature,
        // found nothing and failed the sale: the buyer charged and never served.
        const later = paid.sale.settleBy!.getTime() - Date.now() + 61_000
        yield* reconcile(later)
        expect(chain.calls).toContain("solana:getSignaturesForAddress")
        expect(chain.calls).toContain("solana:getTransaction")
        expect(yield* saleNow(paid.sale.id)).toMatchObject({ status: "settled", transaction: id })
        expect(yield* saleNow(unseen.sale.id)).toMatchObject({ status: "failed", failureReason: "not_settled_before_expiry" })
        // The event was queued at the reconciler's (later) moment.
        yield* drain.pipe(Effect.withClock(shifted(later + 1_000)))
        const events = hook.arrivals.map((a) => JSON.parse(a.rawBody) as any)
        expect(events.filter((e) => e.data.sale_id === paid.sale.id)).toEqual([
          expect.objectContaining({ type: "sale.settled", livemode: true, data: expect.objectContaining({ transaction: id, network: SOLANA }) })
        ])
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("landed but only confirmed: pending (unknown), even past settleBy; settled once finalized", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { seller, sale: base } = yield* purchaseWithUnknownOutcome("recon-sol-final@example.com", hook, 20)
        const paid = yield* solanaSale(seller.accountId, base)
        const id = landSolana(paid.payload, { confirmationStatus: "confirmed" })
        expect(yield* reconcile(paid.sale.settleBy!.getTime() - Date.now() + 61_000)).toMatchObject({ checked: 2, settled: 0 })
        expect(yield* saleNow(paid.sale.id)).toMatchObject({ status: "pending" })
        chain.solana[0] = { ...chain.solana[0]!, confirmationStatus: "finalized" }
        yield* reconcile()
        expect(yield* saleNow(paid.sale.id)).toMatchObject({ status: "settled", transaction: id })
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("landed with an error: failed at once with the reason, nothing delivered, no webhook", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { seller, sale: base } = yield* purchaseWithUnknownOutcome("recon-sol-err@example.com", hook, 20)
        const paid = yield* solanaSale(seller.accountId, base)
        landSolana(paid.payload, { err: { InstructionError: [2, { Custom: 1 }] } })
        yield* reconcile()
        expect(yield* saleNow(paid.sale.id)).toMatchObject({ status: "failed", failureReason: "transaction_failed_on_chain", transaction: null })
        yield* drain
        expect(hook.arrivals.map((a) => JSON.parse(a.rawBody).data.sale_id)).not.toContain(paid.sale.id)
      }))
  })

  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the RPC is down: pending, never failed, long past settleBy", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { seller, sale: base } = yield* purchaseWithUnknownOutcome("recon-sol-down@example.com", hook, 20)
        const paid = yield* solanaSale(seller.accountId, base)
        landSolana(paid.payload)
        chain.down = true
        yield* reconcile(3_600_000)
        expect(yield* saleNow(paid.sale.id)).toMatchObject({ status: "pending" })
      }))
  })
})

describe("test twin: a pending test sale whose simulated transfer happened", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the reconciler settles it with the simulated transaction (sim_…), and its livemode:false webhook goes out once", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        // A live sale of the seller gives the listing and checkout the test sale is recorded against.
        const { seller, sale: live } = yield* purchaseWithUnknownOutcome("recon-twin@example.com", hook, 20)
        const { required } = yield* challenge(seller.test)
        const accepted = acceptedOf(required, BASE_SEPOLIA)
        const buyer = newBuyer()
        const submitted = Either.getOrThrow(decodePaymentHeader({ "payment-signature": b64(yield* signEvm(buyer, required, accepted)) }))
        const requirement: PaymentRequirement = {
          chain: "base",
          livemode: false,
          scheme: "exact",
          network: BASE_SEPOLIA,
          v1Network: "base-sepolia",
          asset: accepted.asset,
          amount: AtomicAmount.make(BigInt(accepted.amount)),
          payTo: accepted.payTo,
          maxTimeoutSeconds: accepted.maxTimeoutSeconds,
          resource: required.resource.url,
          description: "",
          extra: accepted.extra as Record<string, string>
        }
        // The simulated transfer happened, but its answer never reached the purchase: the sale is pending.
        const settlement = yield* (yield* PaymentFacilitator).test.settle(submitted, requirement)
        expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^sim_0x[0-9a-f]{64}$/) })
        const authorization = (submitted.payload as any).authorization
        const pending = new Sale({
          ...live,
          id: `sale_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex")}` as SaleId,
          paymentKey: `${BASE_SEPOLIA}:eip3009:${String(authorization.from).toLowerCase()}:${authorization.nonce}`,
          livemode: false,
          network: BASE_SEPOLIA,
          asset: accepted.asset,
          payTo: accepted.payTo,
          payer: buyer.address,
          settleBy: new Date(Date.now() + 300_000)
        })
        const ledger = yield* SaleLedger
        yield* ledger.recordPending(pending)

        yield* reconcile()
        yield* reconcile()
        expect(Option.getOrThrow(yield* ledger.findById(pending.id))).toMatchObject({ status: "settled", transaction: settlement.transaction })
        yield* drain
        const events = hook.arrivals.map((a) => JSON.parse(a.rawBody) as any).filter((e) => e.data.sale_id === pending.id)
        expect(events).toEqual([expect.objectContaining({ livemode: false, data: expect.objectContaining({ transaction: settlement.transaction }) })])
      }))
  })
})

describe("the Node host's reconcile worker (as hosts/node/main.ts runs it)", () => {
  const WithWorker = ReconcileWorker("100 millis").pipe(
    Layer.provide(Reconciler.Default.pipe(Layer.provide(Settlements.Default))),
    Layer.provideMerge(ReconcilingApp())
  )
  layer(WithWorker, REAL_TIME)((it) => {
    it.scoped("settles a timed-out sale on its own once it is older than the grace (2 × the 500 ms settle timeout, at least 5 s), through RPC outages", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { authorization, sale, seller } = yield* purchaseWithUnknownOutcome("recon-worker@example.com", hook)
        chain.down = true
        yield* Effect.sleep("1 second")
        // Within the grace the worker leaves the sale alone: a purchase may still be waiting for its settle.
        expect(chain.calls).toEqual([])
        landTransfer(authorization, { tx: TX, block: LATEST_BLOCK })
        yield* Effect.sleep("4500 millis")
        // Past it, the worker asks; the RPC is down, so the sale stays pending and the worker keeps going.
        expect(chain.calls.length).toBeGreaterThan(0)
        expect((yield* onlyLedgerSale(seller.accountId)).status).toBe("pending")
        chain.down = false
        let status = "pending"
        for (let i = 0; i < 50 && status === "pending"; i++) {
          yield* Effect.sleep("100 millis")
          status = (yield* onlyLedgerSale(seller.accountId)).status
        }
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "settled", transaction: TX })
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
      }), { timeout: 30_000 })
  })
})

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
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { delay, http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { decodeFunctionData, encodeEventTopics, type Hex, pad, parseAbi, toHex } from "viem"
import { makeSecretBox } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { keyRingOf } from "../../adapters/crypto/SecretKeys.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { pgliteEmbedded } from "../../adapters/sql/PgliteEmbedded.js"
import { base58 } from "../../adapters/solana/SolanaPayment.js"
import { type SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import type { StoragePorts } from "../../hosts/http/AppLayer.js"
import { call } from "../support/app.js"
import { acceptedOf, challenge, PurchaseApp, REAL_TIME, signEvmByHand } from "../support/purchase.js"
import { livePayment, newBuyer, problemOf, presentWithin } from "../faults/support.js"
import { receiver, sellerWithHook } from "../webhooks/support.js"
import { type Receiver } from "../webhooks/receiver.js"

const FACILITATOR = "https://facilitator.test"
// The keys in these URLs stand for a provider's API key: they must never show in a status, log or error.
const BASE_RPC = "https://base-rpc.test/v2/BASEKEY-0123456789"
const SOLANA_RPC = "https://solana-rpc.test/SOLKEY-0123456789"
const BASE = "eip155:8453"
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
const SOLANA_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
const LATEST_BLOCK = 30_000_000n
const TX = "0x5e77edbef0a1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b"

const USDC = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"
])
const AUTHORIZATION_USED = encodeEventTopics({ abi: USDC, eventName: "AuthorizationUsed" })[0]!

/** What the mocked chains know. */
const chain = {
  /** `<authorizer lowercase>:<nonce lowercase>` → the transaction and block that used it. */
  used: new Map<string, { tx: Hex; block: bigint }>(),
  /** Solana signature → its status entry. */
  signatures: new Map<string, { err: unknown; confirmationStatus: string }>(),
  down: false,
  calls: [] as Array<string>
}
const keyOf = (authorizer: string, nonce: string) => `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`

const rpcResult = (id: unknown, result: unknown) => HttpResponse.json({ jsonrpc: "2.0", id, result })

const server = setupServer(
  http.post(`${FACILITATOR}/verify`, async ({ request }) => {
    const body: any = await request.json()
    return HttpResponse.json({ isValid: true, payer: body?.paymentPayload?.payload?.authorization?.from })
  }),
  // Every settle hangs: the app's 500 ms limit cuts it off, so its outcome is unknown.
  http.post(`${FACILITATOR}/settle`, async () => {
    await delay("infinite")
    return HttpResponse.json({})
  }),
  http.post(BASE_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`base:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
    switch (body.method) {
      case "eth_chainId":
        return rpcResult(body.id, "0x2105")
      case "eth_blockNumber":
        return rpcResult(body.id, toHex(LATEST_BLOCK))
      case "eth_call": {
        const [{ data, to }] = body.params
        expect(String(to).toLowerCase()).toBe(BASE_USDC.toLowerCase())
        const { args, functionName } = decodeFunctionData({ abi: USDC, data })
        expect(functionName).toBe("authorizationState")
        const [authorizer, nonce] = args as [string, string]
        return rpcResult(body.id, pad(chain.used.has(keyOf(authorizer, nonce)) ? "0x1" : "0x0"))
      }
      case "eth_getLogs": {
        const [{ address, fromBlock, toBlock, topics }] = body.params
        expect(String(address).toLowerCase()).toBe(BASE_USDC.toLowerCase())
        expect(topics[0]).toBe(AUTHORIZATION_USED)
        const authorizer = `0x${String(topics[1]).slice(-40)}`
        const hit = chain.used.get(keyOf(authorizer, topics[2]))
        const inRange = hit !== undefined && hit.block >= BigInt(fromBlock) && hit.block <= BigInt(toBlock)
        return rpcResult(body.id, inRange ? [{
          address: BASE_USDC.toLowerCase(),
          topics,
          data: "0x",
          blockNumber: toHex(hit.block),
          blockHash: pad("0xb10c", { size: 32 }),
          transactionHash: hit.tx,
          transactionIndex: "0x1",
          logIndex: "0x2",
          removed: false
        }] : [])
      }
      default:
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "method not found" } })
    }
  }),
  http.post(SOLANA_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`solana:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
    expect(body.method).toBe("getSignatureStatuses")
    expect(body.params[1]).toEqual({ searchTransactionHistory: true })
    const value = (body.params[0] as Array<string>).map((sig) => {
      const s = chain.signatures.get(sig)
      return s === undefined ? null : { slot: 321, confirmations: null, ...s }
    })
    return rpcResult(body.id, { context: { slot: 400 }, value })
  })
)
beforeAll(() => server.listen({ onUnhandledRequest: "bypass" }))
afterEach(() => {
  chain.down = false
  chain.calls.length = 0
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
const purchaseWithUnknownOutcome = (email: string, hook: Receiver, validForSeconds?: number) =>
  Effect.gen(function*() {
    const seller = yield* sellerWithHook(email, hook)
    const buyer = newBuyer()
    let signature: any
    let authorization: { from: string; nonce: string; validBefore: string }
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
        chain.used.set(keyOf(authorization.from, authorization.nonce), { tx: TX, block: LATEST_BLOCK - 1_234n })
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
        chain.used.set(keyOf(authorization.from, authorization.nonce), { tx: TX, block: LATEST_BLOCK })
        const raced = yield* Effect.all([reconcile(), reconcile(), reconcile()], { concurrency: 3 })
        expect(raced.reduce((n, s) => n + s.checked, 0)).toBeGreaterThanOrEqual(1)
        expect(yield* onlyLedgerSale(seller.accountId)).toMatchObject({ id: sale.id, status: "settled", transaction: TX })
        yield* drain
        expect(hook.arrivals).toHaveLength(1)
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

describe("Base: nobody can tell", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("the RPC endpoint is down: the sale stays pending (never failed, never settled), even long past validBefore; the URL's key shows nowhere", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const { sale, seller } = yield* purchaseWithUnknownOutcome("recon-down@example.com", hook, 5)
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
        const { authorization, seller } = yield* purchaseWithUnknownOutcome("recon-off@example.com", hook, 5)
        chain.used.set(keyOf(authorization.from, authorization.nonce), { tx: TX, block: LATEST_BLOCK })
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
        chain.used.set(keyOf(first.authorization.from, first.authorization.nonce), { tx: TX, block: LATEST_BLOCK - 9_000n })

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

/** A pending live Solana sale as a purchase records it (the signature is the payment key). */
const solanaSale = (accountId: string, listingFrom: Sale, signature: string) =>
  new Sale({
    ...listingFrom,
    id: `sale_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex")}` as SaleId,
    paymentKey: `${SOLANA}:solana:${signature}`,
    chain: "solana",
    network: SOLANA,
    asset: SOLANA_USDC,
    payTo: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
    payer: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    accountId: accountId as any,
    transaction: null,
    status: "pending",
    failureReason: null,
    createdAt: new Date(Date.now() - 120_000),
    settledAt: null,
    settleBy: new Date(Date.now() + 180_000)
  })

const SIGNATURE = base58(crypto.getRandomValues(new Uint8Array(64)))
const SIGNATURE_2 = base58(crypto.getRandomValues(new Uint8Array(64)))

describe("Solana: the signature confirmed on chain", () => {
  layer(ReconcilingApp(), REAL_TIME)((it) => {
    it.scoped("a pending live Solana sale is settled with the signature as its transaction; one not found stays pending", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        // A settled Base sale of the seller gives the listing and checkout the Solana sales are recorded against.
        const { seller, sale: base } = yield* purchaseWithUnknownOutcome("recon-sol@example.com", hook, 5)
        const ledger = yield* SaleLedger
        const confirmed = solanaSale(seller.accountId, base, SIGNATURE)
        const unseen = solanaSale(seller.accountId, base, SIGNATURE_2)
        yield* ledger.recordPending(confirmed)
        yield* ledger.recordPending(unseen)
        chain.signatures.set(SIGNATURE, { err: null, confirmationStatus: "finalized" })

        yield* reconcile()
        expect(chain.calls).toContain("solana:getSignatureStatuses")
        expect(Option.getOrThrow(yield* ledger.findById(confirmed.id))).toMatchObject({ status: "settled", transaction: SIGNATURE })
        expect(Option.getOrThrow(yield* ledger.findById(unseen.id))).toMatchObject({ status: "pending" })
        yield* drain
        const events = hook.arrivals.map((a) => JSON.parse(a.rawBody) as any)
        expect(events.filter((e) => e.data.sale_id === confirmed.id)).toEqual([
          expect.objectContaining({ type: "sale.settled", livemode: true, data: expect.objectContaining({ transaction: SIGNATURE, network: SOLANA }) })
        ])
      }))
  })
})

/*
 * The Lambda schedule resolves sales left pending by a settle with no answer, from the chain (msw JSON-RPC),
 * before it delivers webhooks: a sale it settles has its `sale.settled` event delivered in the same run, once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { setupServer } from "msw/node"
import type { SaleId } from "../../domain/Ids.js"
import { Sale } from "../../domain/Sale.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { chain, chainRpcHandlers, landTransfer, LATEST_BLOCK, BASE_USDC } from "../support/chainRpc.js"
import { REAL_TIME } from "../support/purchase.js"
import { httpEvent, invoke, LambdaTest, paymentHeadersFor, SCHEDULED_EVENT, sellThroughLambda, TestLambda, webhookReceiver } from "./support.js"

const BASE_RPC = "https://base-rpc.test/lambda/BASEKEY"
const SOLANA_RPC = "https://solana-rpc.test/lambda/SOLKEY"
const TX = "0x7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a"
const server = setupServer(...chainRpcHandlers(BASE_RPC, SOLANA_RPC))
beforeAll(() => server.listen({ onUnhandledRequest: "bypass" }))
afterEach(() => {
  chain.down = false
  chain.calls.length = 0
})
afterAll(() => server.close())

const runSchedule = Effect.flatMap(TestLambda, (l) => Effect.promise(() => l.scheduled(SCHEDULED_EVENT)))

describe("scheduled handler: pending sales are resolved from the chain before delivery", () => {
  layer(LambdaTest({
    allowPrivateWebhooks: true,
    delivery: { quietMs: 500, pollMs: 100 },
    config: { X402_FACILITATOR_URL: "https://facilitator.test", BASE_RPC_URL: BASE_RPC, SOLANA_RPC_URL: SOLANA_RPC }
  }), REAL_TIME)((it) => {
    it.scoped("a live sale whose authorization the chain shows used is settled and its webhook delivered in the same run, once", () =>
      Effect.gen(function*() {
        const receiver = yield* webhookReceiver()
        const { session, testCheckout } = yield* sellThroughLambda("lambda-recon@example.com")
        const set = yield* invoke(httpEvent("PATCH", "/my/account", { token: session, json: { webhook_url: receiver.url } }))
        expect(set.statusCode, set.body).toBe(200)
        // A test-twin sale gives the listing and checkout the live sale is recorded against.
        const challenge = yield* invoke(httpEvent("GET", testCheckout))
        expect((yield* invoke(httpEvent("GET", testCheckout, { headers: yield* paymentHeadersFor(challenge) }))).statusCode).toBe(200)
        const account = Option.getOrThrow(yield* (yield* AccountStore).findByEmail("lambda-recon@example.com"))
        const ledger = yield* SaleLedger
        const [twin] = (yield* ledger.listByAccount(account.id, { limit: 10 })).sales

        // A live sale left pending two minutes ago by a settle that timed out; the chain shows it used.
        const authorizer = `0x${"ab".repeat(20)}`
        const nonce = `0x${"cd".repeat(32)}`
        const pending = new Sale({
          ...twin!,
          id: "sale_lambdareconcile01" as SaleId,
          paymentKey: `eip155:8453:eip3009:${authorizer}:${nonce}`,
          livemode: true,
          network: "eip155:8453",
          asset: BASE_USDC,
          payer: authorizer,
          transaction: null,
          status: "pending",
          settledAt: null,
          createdAt: new Date(Date.now() - 120_000),
          settleBy: new Date(Date.now() + 600_000)
        })
        yield* ledger.recordPending(pending)
        landTransfer({ from: authorizer, to: pending.payTo, value: pending.amount, nonce }, { tx: TX, block: LATEST_BLOCK - 5n })

        const summary = yield* runSchedule
        expect(summary.reconciled).toMatchObject({ checked: 1, settled: 1, errors: 0 })
        expect(Option.getOrThrow(yield* ledger.findById(pending.id))).toMatchObject({ status: "settled", transaction: TX })
        const live = () => receiver.received.map((r) => JSON.parse(r.rawBody)).filter((e) => e.livemode === true)
        expect(live()).toEqual([expect.objectContaining({ type: "sale.settled", data: expect.objectContaining({ sale_id: pending.id, transaction: TX }) })])

        const again = yield* runSchedule
        expect(again.reconciled).toMatchObject({ checked: 0 })
        expect(live()).toHaveLength(1)
      }))
  })
})

/*
 * The seller's webhook receiver down (connection refused). The buyer is served regardless (delivery runs
 * from the outbox, never on the buyer's request), the sale is on GET /my/sales, and its webhook shows the
 * failed attempt as pending for a retry. Retries, back-off and the final `failed` are covered in
 * test/webhooks/; this is the one short check that a dead receiver costs no sale.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { BASE_WALLET, call } from "../support/app.js"
import { PurchaseApp, REAL_TIME, sell } from "../support/purchase.js"
import { closedPort } from "./fakeFacilitator.js"
import { buyTwin, ledgerOf } from "./support.js"

const deadPort = await closedPort()

describe("webhook receiver down", () => {
  layer(Layer.provideMerge(Webhooks.Default, PurchaseApp({ config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } })), REAL_TIME)((it) => {
    it.effect("the buyer is served, the sale is on /my/sales, its webhook is pending after a failed attempt", () =>
      Effect.gen(function*() {
        const seller = yield* sell("receiver-down@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const hook = `http://127.0.0.1:${deadPort}/hook`
        const patched = yield* call("PATCH", "/my/account", { token: seller.key, body: { webhook_url: hook } })
        expect(patched.status, patched.text).toBe(200)

        const receipt = yield* buyTwin(seller.test)
        // One delivery pass, as the host's worker would run it: the receiver refuses the connection.
        expect(yield* Effect.flatMap(Webhooks, (w) => w.deliverDue())).toBe(1)

        const sales = yield* call("GET", "/my/sales", { token: seller.key })
        expect(sales.status).toBe(200)
        expect(sales.json.sales).toHaveLength(1)
        expect(sales.json.sales[0]).toMatchObject({ transaction: receipt.transaction, livemode: false })
        expect(sales.json.sales[0].webhook).toMatchObject({ status: "pending", attempts: 1 })
        expect(sales.json.sales[0].webhook.last_error).toEqual(expect.any(String))
        expect((yield* ledgerOf(seller.accountId)).map((s) => s.status)).toEqual(["settled"])
      }))
  })
})

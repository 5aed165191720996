import { HttpServer } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { gunzipSync } from "node:zlib"
import { BASE_WALLET, call, checkoutIdOf, signInWithKey, TestApp } from "../support/app.js"

const origin = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
})

it.layer(TestApp())((it) => {
  it.effect("the official v2 client buys through the test twin and gets the manifest, not the bytes", () =>
    Effect.gen(function*() {
      const { key } = yield* signInWithKey("seller@example.com")
      const listed = yield* call("POST", "/repos", {
        token: key,
        body: { host_url: "https://github.com/octo-org/widget", price_usd: "0.50", wallet_base: BASE_WALLET }
      })
      expect(listed.status).toBe(201)
      const url = `${yield* origin}/checkout/${checkoutIdOf(listed.json.test_checkout_url)}/test`

      const unpaid = yield* Effect.promise(() => fetch(url))
      expect(unpaid.status).toBe(402)
      const required = JSON.parse(Buffer.from(unpaid.headers.get("payment-required")!, "base64").toString())
      expect(required.accepts).toEqual([expect.objectContaining({
        scheme: "exact",
        network: "eip155:84532",
        amount: "500000",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        payTo: BASE_WALLET,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC", version: "2" }
      })])

      const buyer = privateKeyToAccount(generatePrivateKey())
      const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
      const pay = wrapFetchWithPayment(fetch, client)
      const paid = yield* Effect.promise(() => pay(url))
      expect(paid.status).toBe(200)
      expect(paid.headers.get("content-type")).toBe("application/gzip")
      expect(paid.headers.get("content-disposition")).toMatch(/^attachment; filename="Octo-Org-Widget-0123456\.tar\.gz"$/)
      expect(paid.headers.get("link")).toMatch(/^<http:\/\/repomarket\.test\/downloads\/sale_[^>]+>; rel="receipt"$/)
      const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-response")!, "base64").toString())
      expect(receipt).toMatchObject({ success: true, network: "eip155:84532", payer: buyer.address })
      expect(receipt.transaction).toMatch(/^sim_0x[0-9a-f]{64}$/)
      const tar = gunzipSync(Buffer.from(yield* Effect.promise(() => paid.arrayBuffer()))).toString("latin1")
      expect(tar).toContain("MANIFEST.json")
      expect(tar).toContain("NOTE.txt")
      expect(tar).toContain("src/index.ts")
      expect(tar).not.toContain("export {}")
    }))
})

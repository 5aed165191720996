import { expect, layer } from "@effect/vitest"
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x"
import { Effect } from "effect"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET, call } from "../support/app.js"
import { expectTestGoods, PurchaseApp, REAL_TIME, salesOf, sell } from "../support/purchase.js"
import { callTool, embeddedArchive, payThroughMcp } from "./doors.js"

// redownload with Sign-In-With-X through MCP: the paying wallet signs the challenge that buy_repo's
// payment-required carries (the HTTP 402's), with @x402/extensions' own client helpers, and gets its goods
// again: no payment, no new sale. A proof is spent once; a wallet that bought nothing gets nothing.

const SEPOLIA = "eip155:84532"

/** The wallet's proof over the challenge of a fresh payment-required of `checkout`. */
const proofFor = (checkout: string, wallet: PrivateKeyAccount) =>
  Effect.gen(function*() {
    const required = (yield* callTool("buy_repo", { checkout_url: checkout })).structuredContent
    const declared = required.extensions["sign-in-with-x"]
    const chain = declared.supportedChains.find((c: { chainId: string }) => c.chainId === SEPOLIA)
    return yield* Effect.promise(async () =>
      encodeSIWxHeader(await createSIWxPayload({ ...declared.info, chainId: SEPOLIA, type: chain.type }, wallet, declared.info.uri)))
  })

layer(PurchaseApp(), REAL_TIME)("redownload by Sign-In-With-X", (it) => {
  it.effect("the paying wallet's proof gives the same goods, once per challenge; another wallet's gives none", () =>
    Effect.gen(function*() {
      const seller = yield* sell("mcp-siwx@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const checkout = seller.listing.test_checkout_url
      const buyer = privateKeyToAccount(generatePrivateKey())
      const { paid } = yield* payThroughMcp(checkout, buyer)
      const bought = embeddedArchive(paid)!
      expectTestGoods(bought)

      const proof = yield* proofFor(checkout, buyer)
      const again = yield* callTool("redownload", { checkout_url: checkout, sign_in_with_x: proof })
      expect(again.isError, JSON.stringify(again).slice(0, 300)).not.toBe(true)
      expect(embeddedArchive(again)!.equals(bought)).toBe(true)
      expect(again.structuredContent).toMatchObject({ payer: buyer.address, receipt: paid.structuredContent.receipt })

      // The same proof again: spent. A wallet that paid nothing: nothing to give. Each a fresh challenge.
      const replayed = yield* callTool("redownload", { checkout_url: checkout, sign_in_with_x: proof })
      expect(replayed).toMatchObject({ isError: true, structuredContent: { x402Version: 2, error: "invalid_siwx_nonce" } })
      expect(embeddedArchive(replayed)).toBeUndefined()
      const stranger = yield* callTool("redownload", { checkout_url: checkout, sign_in_with_x: yield* proofFor(checkout, privateKeyToAccount(generatePrivateKey())) })
      expect(stranger).toMatchObject({ isError: true, structuredContent: { error: "siwx_no_purchase" } })
      expect(embeddedArchive(stranger)).toBeUndefined()
      // A proof that is not one: 400 naming the header's field, as over HTTP.
      const junk = yield* callTool("redownload", { checkout_url: checkout, sign_in_with_x: "not a proof" })
      expect(junk.structuredContent).toMatchObject({ status: 400, code: "invalid_request" })
      // Both arguments or neither: refused before anything is looked up.
      const both = yield* callTool("redownload", { receipt: paid.structuredContent.receipt, checkout_url: checkout, sign_in_with_x: proof })
      expect(both.structuredContent).toMatchObject({ status: 400, code: "invalid_request", errors: [{ field: "arguments" }] })

      expect(yield* salesOf(seller.accountId)).toHaveLength(1)
    }))
})

// A layer of its own: each layer's fake code host lists the widget once.
layer(PurchaseApp(), REAL_TIME)("redownload by Sign-In-With-X at a voided checkout", (it) => {
  it.effect("after a reprice the old checkout cannot be paid: 410 checkout_gone with a challenge, and the paying wallet still recovers there", () =>
    Effect.gen(function*() {
      const seller = yield* sell("mcp-siwx-void@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const checkout = seller.listing.test_checkout_url
      const buyer = privateKeyToAccount(generatePrivateKey())
      const bought = embeddedArchive((yield* payThroughMcp(checkout, buyer)).paid)!

      const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { price_usd: "0.60" } })
      expect(repriced.status, repriced.text).toBe(200)
      const gone = yield* callTool("buy_repo", { checkout_url: checkout })
      expect(gone).toMatchObject({ isError: true, structuredContent: { status: 410, code: "checkout_gone" } })
      const declared = gone.structuredContent.extensions["sign-in-with-x"]
      expect(declared.info.uri).toBe(checkout)
      const proof = yield* Effect.promise(async () =>
        encodeSIWxHeader(await createSIWxPayload({ ...declared.info, chainId: SEPOLIA, type: "eip191" }, buyer, declared.info.uri)))
      const again = yield* callTool("redownload", { checkout_url: checkout, sign_in_with_x: proof })
      expect(embeddedArchive(again)!.equals(bought)).toBe(true)
    }))
})

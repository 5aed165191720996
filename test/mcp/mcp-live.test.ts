import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { isPaymentRequired } from "@x402/core/schemas"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { extractDiscoveryInfo, validateDiscoveryExtension, validateDiscoveryExtensionSpec } from "@x402/extensions/bazaar"
import { decodeSignedOffers, extractOffersFromPaymentRequired, verifyOfferSignatureJWS } from "@x402/extensions/offer-receipt"
import { Effect } from "effect"
import { delay, http, HttpResponse } from "msw"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { verifyReceipt } from "../../index.js"
import { BASE_URL, BASE_WALLET } from "../support/app.js"
import { recordingFacilitator } from "../support/recordingFacilitator.js"
import { bytesOf, get, local, onlySale, origin, PurchaseApp, REAL_TIME, salesOf, sell, WIDGET_SHA } from "../support/purchase.js"
import { callTool, embeddedArchive, payThroughMcp } from "./doors.js"

// A live purchase through the MCP server: real money's requirements (Base mainnet), a facilitator on the other
// side of HTTP (msw, answering as x402 facilitators do), the buyer's payment made by the official x402 client.

const FACILITATOR = "https://facilitator.test"
const BASE = "eip155:8453"
const TX = "0x9f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100"
/** What the in-memory code host streams as the widget's archive at the pinned commit. */
const WIDGET_ARCHIVE = "0123456 README.md\n# Widget\n\nHello <script>alert(1)</script>\n\n0123456 src/index.ts\nexport {}\n\n"

const { calls, server: facilitator } = recordingFacilitator(FACILITATOR)

/** The facilitator verifies the payer's payment and answers settle with `settled` (by default: settled). */
const facilitatorAnswers = (payer: string, settled: () => Promise<Response> | Response = () => HttpResponse.json({ success: true, transaction: TX, network: BASE, payer })) =>
  facilitator.use(
    http.post(`${FACILITATOR}/verify`, async ({ request }) => {
      calls.push({ path: "/verify", body: await request.json() })
      return HttpResponse.json({ isValid: true, payer })
    }),
    http.post(`${FACILITATOR}/settle`, async ({ request }) => {
      calls.push({ path: "/settle", body: await request.json() })
      return settled()
    })
  )

const LiveApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } })

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

describe("buy_repo with real money (loopback facilitator)", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("the official x402 client pays the MCP payment-required; the goods, the settlement and the receipt come back; the facilitator catalogs the MCP tool", () =>
      Effect.gen(function*() {
        const seller = yield* sell("mcp-live@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const unpaid = yield* callTool("buy_repo", { checkout_url: seller.listing.checkout_url })
        const required = unpaid.structuredContent
        // The official schema's reading: a PaymentRequired, for the live checkout.
        expect(isPaymentRequired(required)).toBe(true)
        expect(required.accepts).toEqual([expect.objectContaining({ network: BASE, amount: "750000", payTo: BASE_WALLET })])
        // Its Bazaar entries: the MCP tool, valid by @x402/extensions, and the service metadata on the resource.
        const bazaar = required.extensions.bazaar
        expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true })
        expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true })
        expect(bazaar.info.input).toMatchObject({ type: "mcp", toolName: "buy_repo", transport: "streamable-http" })
        expect(required.resource).toMatchObject({ url: seller.listing.checkout_url, serviceName: "repomarket", iconUrl: `${BASE_URL}/favicon.svg` })
        expect(required.resource.tags).toEqual(expect.arrayContaining(["typescript", "source-code"]))

        const buyer = privateKeyToAccount(generatePrivateKey())
        facilitatorAnswers(buyer.address)
        const payment = yield* Effect.promise(() => new x402Client().register("eip155:*", new ExactEvmScheme(buyer)).createPaymentPayload(required))
        const paid = yield* callTool("buy_repo", { checkout_url: seller.listing.checkout_url, include_archive: true }, { "x402/payment": payment })
        expect(paid.isError, JSON.stringify(paid).slice(0, 400)).not.toBe(true)
        expect(paid._meta["x402/payment-response"]).toMatchObject({ success: true, transaction: TX, network: BASE, payer: buyer.address })
        expect(paid._meta["x402/payment-response"].extensions["offer-receipt"].info.receipt.signature).toBe(paid.structuredContent.signed_receipt)
        expect(paid.structuredContent).toMatchObject({ commit: WIDGET_SHA, livemode: true, transaction: TX })
        const archive = embeddedArchive(paid)!
        expect(archive.toString("utf8")).toBe(WIDGET_ARCHIVE)
        // The receipt link gives the same bytes (the same digest) over HTTP.
        const again = yield* bytesOf(yield* get(yield* local(paid.structuredContent.receipt)))
        expect(sha256(again)).toBe(sha256(archive))
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", livemode: true, transaction: TX })

        // What the facilitator got to verify and settle: the MCP tool's entry at /mcp, with our metadata.
        expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
        for (const { body } of calls) {
          const entry = extractDiscoveryInfo(body.paymentPayload, body.paymentRequirements, true) as any
          expect(entry).toMatchObject({ resourceUrl: `${BASE_URL}/mcp`, toolName: "buy_repo", serviceName: "repomarket", x402Version: 2 })
          expect(entry.tags).toContain("source-code")
        }

        // A second buyer, after the commit's first cut: the signed offers name the archive's digest, the bytes hash
        // to it, and the signed receipt (in the result and in the settlement's offer-receipt) verifies with it.
        const jwks = yield* Effect.flatMap(Effect.flatMap(origin, (o) => get(`${o}/.well-known/jwks.json`)), (res) => Effect.promise(() => res.json() as Promise<{ keys: ReadonlyArray<any> }>))
        const digest = { sha256: sha256(archive), size: archive.length }
        const offered = (yield* callTool("buy_repo", { checkout_url: seller.listing.checkout_url })).structuredContent
        const offers = extractOffersFromPaymentRequired(offered)
        for (const offer of offers) yield* Effect.promise(() => verifyOfferSignatureJWS(offer as any, jwks.keys[0]))
        expect(decodeSignedOffers(offers)).toEqual([expect.objectContaining({ commit: WIDGET_SHA, archive: digest })])
        const second = privateKeyToAccount(generatePrivateKey())
        facilitatorAnswers(second.address)
        const { paid: paid2 } = yield* payThroughMcp(seller.listing.checkout_url, second)
        expect(sha256(embeddedArchive(paid2)!)).toBe(digest.sha256)
        expect(paid2.structuredContent).toMatchObject({ commit: WIDGET_SHA, archive: digest })
        const signed = paid2.structuredContent.signed_receipt
        expect(paid2._meta["x402/payment-response"].extensions["offer-receipt"].info.receipt).toEqual({ format: "jws", signature: signed })
        const verified = yield* Effect.promise(() => verifyReceipt(signed, jwks, { archive: digest }))
        expect(verified).toMatchObject({ valid: true, claims: { commit: WIDGET_SHA, payer: second.address, archive: digest } })
      }))
  })
})

describe("buy_repo with real money: settlement outcomes as over HTTP", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("settle refused: payment-required naming the reason (in words too) with x402/payment-response success:false, no goods, the sale pending with the refusal noted (its authorization may still move); again, no second settle", () =>
      Effect.gen(function*() {
        const seller = yield* sell("mcp-settle-failed@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const buyer = privateKeyToAccount(generatePrivateKey())
        facilitatorAnswers(buyer.address, () => HttpResponse.json({ success: false, errorReason: "insufficient_funds", transaction: "", network: BASE, payer: buyer.address }))
        const { paid, payment } = yield* payThroughMcp(seller.listing.checkout_url, buyer)
        expect(paid).toMatchObject({ isError: true, structuredContent: { x402Version: 2, error: "insufficient_funds" } })
        expect(paid.structuredContent["x402/payment-response"]).toEqual({ success: false, transaction: "", network: BASE, payer: buyer.address, errorReason: "insufficient_funds" })
        expect(embeddedArchive(paid)).toBeUndefined()
        expect(JSON.stringify(paid)).not.toContain(`${BASE_URL}/downloads/`)
        expect(JSON.stringify(paid)).toContain("does not hold enough USDC")
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "pending", failureReason: "insufficient_funds" })

        const again = yield* callTool("buy_repo", { checkout_url: seller.listing.checkout_url }, { "x402/payment": payment })
        expect(again.structuredContent["x402/payment-response"]).toMatchObject({ success: false, errorReason: "insufficient_funds" })
        expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
      }))
  })

  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("settle unanswered: 503 settlement_pending saying it may have been charged; the sale stays pending, no goods", () =>
      Effect.gen(function*() {
        const seller = yield* sell("mcp-settle-timeout@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const buyer = privateKeyToAccount(generatePrivateKey())
        facilitatorAnswers(buyer.address, async () => {
          await delay("infinite")
          return HttpResponse.json({ success: true, transaction: TX, network: BASE })
        })
        const { paid } = yield* payThroughMcp(seller.listing.checkout_url, buyer)
        expect(paid).toMatchObject({ isError: true, structuredContent: { status: 503, code: "settlement_pending" } })
        expect(paid.structuredContent.retry_after_seconds).toBeGreaterThan(0)
        expect(paid.structuredContent.detail).toMatch(/may have been charged/)
        expect(embeddedArchive(paid)).toBeUndefined()
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "pending", transaction: null })
      }))
  })

  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("settlement_pending with the broadcast transaction (issue 39): 503 settlement_pending as over HTTP, never 'failed'; the sale stays pending", () =>
      Effect.gen(function*() {
        const seller = yield* sell("mcp-settle-broadcast@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const buyer = privateKeyToAccount(generatePrivateKey())
        facilitatorAnswers(buyer.address, () => HttpResponse.json({ success: false, errorReason: "settlement_pending", transaction: TX, network: BASE, payer: buyer.address }))
        const { paid } = yield* payThroughMcp(seller.listing.checkout_url, buyer)
        expect(paid).toMatchObject({ isError: true, structuredContent: { status: 503, code: "settlement_pending" } })
        expect(paid.structuredContent.retry_after_seconds).toBeGreaterThan(0)
        expect(embeddedArchive(paid)).toBeUndefined()
        expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "pending", failureReason: null })
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import {
  extractDiscoveryInfo,
  validateAndExtract,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec
} from "@x402/extensions/bazaar"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { http, HttpResponse } from "msw"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { recordingFacilitator } from "../support/recordingFacilitator.js"
import { BASE_WALLET, SOLANA_WALLET } from "../support/app.js"
import { acceptedOf, challenge, expectGoods, payWith, PurchaseApp, REAL_TIME, sell, signEvm } from "../support/purchase.js"

// The x402 `bazaar` discovery extension (coinbase/x402 specs/extensions/bazaar.md): declared on every 402,
// checked with @x402/extensions' own validation, and carried to the facilitator in the payment it verifies
// and settles, which is where a facilitator catalogs it from.

const FACILITATOR = "https://facilitator.test"
const BASE = "eip155:8453"
const TX = "0x9f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100"

const { calls, server: facilitator } = recordingFacilitator(FACILITATOR)
/** The verify and settle calls (a listing with a Solana wallet also makes the app ask `/supported`). */
const paymentCalls = () => calls.filter((c) => c.path === "/verify" || c.path === "/settle")

const facilitatorAnswers = (payer: string) => {
  facilitator.use(
    http.post(`${FACILITATOR}/verify`, async ({ request }) => {
      calls.push({ path: "/verify", body: await request.json() })
      return HttpResponse.json({ isValid: true, payer })
    }),
    http.post(`${FACILITATOR}/settle`, async ({ request }) => {
      calls.push({ path: "/settle", body: await request.json() })
      return HttpResponse.json({ success: true, transaction: TX, network: BASE, payer })
    })
  )
}

const LiveApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } })
const newBuyer = () => privateKeyToAccount(generatePrivateKey())

/** The facilitator's own reading of what it was sent: @x402/extensions' `extractDiscoveryInfo`, validating. */
const cataloged = (body: any) => extractDiscoveryInfo(body.paymentPayload, body.paymentRequirements, true)

describe("the bazaar discovery extension", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("every 402, live and test, declares a GET with no input answered by an application/gzip archive, valid by @x402/extensions", () =>
      Effect.gen(function*() {
        const seller = yield* sell("bazaar@example.com", { price_usd: "3.00", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        for (const url of [seller.live, seller.test]) {
          const { required, body } = yield* challenge(url)
          const bazaar = required.extensions.bazaar
          expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true })
          expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true })
          const { valid, info } = validateAndExtract(bazaar)
          expect(valid).toBe(true)
          expect(info).toMatchObject({
            input: { type: "http", method: "GET" },
            output: { type: "application/gzip", format: "tar.gz", example: { filename: "<owner>-<repo>-<sha7>.tar.gz" } }
          })
          // No input: no query parameter, header or body is declared.
          expect(Object.keys((info as any).input.queryParams ?? {})).toEqual([])
          expect((info as any).input.headers).toBeUndefined()
          // Each checkout URL is its own catalog entry: no route template folding them into one.
          expect(bazaar.routeTemplate).toBeUndefined()
          // The other extensions are still declared beside it.
          expect(Object.keys(required.extensions).sort()).toEqual(["bazaar", "offer-receipt", "payment-identifier", "sign-in-with-x"])
          expect(required.resource).toMatchObject({ mimeType: "application/gzip", description: expect.stringContaining("Octo-Org/Widget") })
          // The v1 body carries only the signed offers (where x402's offer-receipt extension puts them in v1).
          expect(Object.keys(body.extensions)).toEqual(["offer-receipt"])
        }
      }))

    it.effect("the official client echoes it; the facilitator gets it on verify and settle and catalogs this checkout", () =>
      Effect.gen(function*() {
        const seller = yield* sell("bazaar@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const buyer = newBuyer()
        facilitatorAnswers(buyer.address)
        const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
        yield* expectGoods(yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.live)))

        expect(paymentCalls().map((c) => c.path)).toEqual(["/verify", "/settle"])
        for (const { body } of paymentCalls()) {
          expect(body.paymentPayload.extensions.bazaar).toEqual(required.extensions.bazaar)
          expect(cataloged(body)).toMatchObject({
            resourceUrl: required.resource.url,
            method: "GET",
            x402Version: 2,
            mimeType: "application/gzip",
            description: required.resource.description,
            discoveryInfo: required.extensions.bazaar.info
          })
        }
      }))

    it.effect("a buyer cannot poison the catalog: a changed or dropped declaration and another resource reach the facilitator as ours", () =>
      Effect.gen(function*() {
        const seller = yield* sell("bazaar@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const honest = () => signEvm(newBuyer(), required, acceptedOf(required, BASE))
        const tampered = [
          {
            ...(yield* honest()),
            resource: { url: "https://evil.example/free-stuff", description: "<img src=x onerror=alert(1)>", mimeType: "text/html" },
            extensions: {
              bazaar: {
                ...required.extensions.bazaar,
                routeTemplate: "/checkout/:id",
                info: { input: { type: "http", method: "GET", queryParams: { admin: "1" } }, output: { type: "json" } }
              }
            }
          },
          { ...(yield* honest()), extensions: undefined }
        ]
        for (const payment of tampered) {
          const payer = (payment.payload as any).authorization.from as string
          facilitatorAnswers(payer)
          yield* expectGoods(yield* payWith(seller.live, payment))
          expect(paymentCalls().map((c) => c.path)).toEqual(["/verify", "/settle"])
          for (const { body } of paymentCalls()) {
            expect(body.paymentPayload.resource).toEqual(expect.objectContaining({ url: required.resource.url, mimeType: "application/gzip" }))
            expect(body.paymentPayload.extensions.bazaar).toEqual(required.extensions.bazaar)
            const entry = cataloged(body)
            expect(entry?.resourceUrl).toBe(required.resource.url)
            expect((entry as { routeTemplate?: string } | null)?.routeTemplate).toBeUndefined()
          }
          calls.length = 0
          facilitator.resetHandlers()
        }
      }))
  })
})

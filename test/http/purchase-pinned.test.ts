import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { decodeSignedOffers, extractOffersFromPaymentRequired, extractReceiptFromResponse, verifyOfferSignatureJWS, verifyReceiptSignatureJWS } from "@x402/extensions/offer-receipt"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { http, HttpResponse } from "msw"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { verifyReceipt } from "../../index.js"
import { recordingFacilitator } from "../support/recordingFacilitator.js"
import { BASE_URL, BASE_WALLET, PUBLIC_REPO } from "../support/app.js"
import { bytesOf, challenge, expectGoods, get, local, origin, payWith, PurchaseApp, REAL_TIME, receiptOf, salesOf, sell, unb64, WIDGET_SHA } from "../support/purchase.js"

/*
 * Issue 30: every 402 pins the commit its archive is cut from (and, once cut, the archive's digest) in signed
 * x402 `offer-receipt` offers; a purchase delivers exactly that commit, with `Repr-Digest` and a signed receipt
 * that verifies with the published keys; a commit that moved between the 402 and the payment is refused before
 * any facilitator call. Payments are made by the official @x402 clients; the facilitator is msw.
 */

const FACILITATOR = "https://facilitator.test"
const BASE = "eip155:8453"
const TX = "0x9f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100"
const PUSHED_SHA = "fedcba9876543210fedcba9876543210fedcba98"
const PUSHED = { ...PUBLIC_REPO, headSha: PUSHED_SHA, files: { ...PUBLIC_REPO.files, "CHANGELOG.md": "pushed\n" } }

const { calls, server: facilitator } = recordingFacilitator(FACILITATOR)
const answer = (path: "verify" | "settle", respond: () => Response) =>
  facilitator.use(http.post(`${FACILITATOR}/${path}`, async ({ request }) => {
    calls.push({ path: `/${path}`, body: await request.json() })
    return respond()
  }))
const facilitatorOk = (payer: string) => {
  answer("verify", () => HttpResponse.json({ isValid: true, payer }))
  answer("settle", () => HttpResponse.json({ success: true, transaction: TX, network: BASE, payer }))
}

const LiveApp = () => PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } })
const newBuyer = () => privateKeyToAccount(generatePrivateKey())
const clientOf = (buyer = newBuyer()) => ({ buyer, client: new x402Client().register("eip155:*", new ExactEvmScheme(buyer)) })

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const reprDigestOf = (bytes: Uint8Array) => `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`

/** The published keys, as a verifier downloads them once. */
const publishedKeys = Effect.gen(function*() {
  const res = yield* get(`${yield* origin}/.well-known/jwks.json`)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toMatch(/^application\/jwk-set\+json/)
  return (yield* Effect.promise(() => res.json())) as { keys: ReadonlyArray<{ kid: string; kty: string; crv: string; x: string }> }
})

/** The signed offers of a v2 402, decoded by the official client, after checking each with the published key. */
const offersOf = (required: any) =>
  Effect.gen(function*() {
    const { keys } = yield* publishedKeys
    const offers = extractOffersFromPaymentRequired(required)
    for (const offer of offers) yield* Effect.promise(() => verifyOfferSignatureJWS(offer as any, keys[0] as any))
    return decodeSignedOffers(offers) as ReadonlyArray<any>
  })

/** The same JWS with its payload replaced: header and signature as signed. */
const withPayload = (jws: string, payload: unknown) => {
  const [header, , signature] = jws.split(".")
  return `${header}.${Buffer.from(JSON.stringify(payload), "utf8").toString("base64url")}.${signature}`
}

const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split(".")[1]!, "base64url").toString("utf8"))

describe("every 402 pins the commit", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("v2 and v1, live and test: signed offers name the checkout, the terms and the head commit; the repo page and live offers name its archive's digest before anybody bought it, test offers none", () =>
      Effect.gen(function*() {
        const seller = yield* sell("pin@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        // The repo page of a listing for sale, viewed before any 402: it had the commit's archive cut, and names it.
        const before = yield* get(`${yield* origin}/r/Octo-Org/Widget`, { accept: "application/json" })
        const shown = (yield* Effect.promise(() => before.json() as Promise<{ archive: unknown }>)).archive
        expect(shown).toStrictEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), size: expect.any(Number) })
        for (const [url, resource, livemode] of [[seller.live, seller.listing.checkout_url, true], [seller.test, seller.listing.test_checkout_url, false]] as const) {
          const { required, body } = yield* challenge(url)
          const offers = yield* offersOf(required)
          expect(offers).toHaveLength(required.accepts.length)
          offers.forEach((offer, i) => {
            expect(offer).toMatchObject({
              format: "jws",
              acceptIndex: i,
              version: 1,
              resourceUrl: resource,
              scheme: "exact",
              network: required.accepts[i].network,
              asset: required.accepts[i].asset,
              payTo: required.accepts[i].payTo,
              amount: required.accepts[i].amount,
              listing: expect.stringMatching(/^lst_/),
              repository: "Octo-Org/Widget",
              commit: WIDGET_SHA,
              // The first live 402 of a commit cut its archive (and waited for it): nobody bought it yet. The test
              // twin delivers a manifest of its own, never that archive: its offers name no digest.
              archive: livemode ? shown : null,
              livemode
            })
            expect(offer.validUntil).toBeGreaterThan(Date.now() / 1000)
          })
          // The repo page names the same commit and archive.
          const page = yield* get(`${yield* origin}/r/Octo-Org/Widget`, { accept: "application/json" })
          expect(yield* Effect.promise(() => page.json())).toMatchObject({ commit: WIDGET_SHA, archive: shown })
          // x402 v1 clients read the body: the same signed offers, at the place the extension gives them in v1.
          expect(body.extensions["offer-receipt"].info.offers).toEqual(required.extensions["offer-receipt"].info.offers)
        }
      }))
  })
})

describe("a purchase delivers the pinned commit, its digest and a signed receipt", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("the bytes hash to the digest the 402 names; Repr-Digest on every archive; the receipt verifies, and fails once altered", () =>
      Effect.gen(function*() {
        const seller = yield* sell("digest@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const jwks = yield* publishedKeys

        // The first buyer of the commit: the 402 the official client paid already named the archive (the first
        // offer of a commit cuts it), and the very first delivery carries its Repr-Digest and a receipt naming it.
        const first = clientOf()
        facilitatorOk(first.buyer.address)
        const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, first.client)(seller.live))
        const bytes = yield* expectGoods(paid)
        const digest = { sha256: sha256(bytes), size: bytes.length }
        expect(paid.headers.get("repr-digest")).toBe(reprDigestOf(bytes))
        const firstReceipt = extractReceiptFromResponse(paid)
        expect(firstReceipt?.format).toBe("jws")
        const firstCheck = yield* Effect.promise(() => verifyReceipt(firstReceipt as any, jwks, { archive: digest }))
        expect(firstCheck).toMatchObject({ valid: true, claims: { commit: WIDGET_SHA, payer: first.buyer.address, archive: digest } })

        // Every 402 names the archive, and the receipt link answers with its digest and a receipt naming it.
        const { required } = yield* challenge(`${seller.live}?after-the-cut`)
        for (const offer of yield* offersOf(required)) expect(offer).toMatchObject({ commit: WIDGET_SHA, archive: digest })
        const again = yield* get(yield* local(receiptOf(paid)))
        const againBytes = yield* expectGoods(again)
        expect(againBytes.equals(bytes)).toBe(true)
        expect(again.headers.get("repr-digest")).toBe(reprDigestOf(bytes))
        const relinked = yield* Effect.promise(() => verifyReceipt(again.headers.get("x-receipt")!, jwks, { archive: digest }))
        expect(relinked).toMatchObject({ valid: true, claims: { sale: firstCheck.valid ? firstCheck.claims.sale : "", archive: digest } })

        // The repo page (JSON and HTML) names the commit a purchase delivers and its archive.
        const pageJson = yield* get(`${yield* origin}/r/Octo-Org/Widget?after-the-cut`, { accept: "application/json" })
        expect(yield* Effect.promise(() => pageJson.json())).toMatchObject({ commit: WIDGET_SHA, archive: digest })
        const htmlRes = yield* get(`${yield* origin}/r/Octo-Org/Widget`, { accept: "text/html" })
        const pageHtml = yield* Effect.promise(() => htmlRes.text())
        expect(pageHtml).toContain(`A purchase delivers commit <code>${WIDGET_SHA}</code>: archive SHA-256 <code>${digest.sha256}</code>, ${digest.size} bytes`)

        // A second buyer: the delivered bytes hash to the offered digest, in Repr-Digest and in the signed receipt.
        calls.length = 0
        const second = clientOf()
        facilitatorOk(second.buyer.address)
        const paid2 = yield* Effect.promise(() => wrapFetchWithPayment(fetch, second.client)(seller.live))
        const bytes2 = yield* expectGoods(paid2)
        expect(sha256(bytes2)).toBe(digest.sha256)
        expect(paid2.headers.get("repr-digest")).toBe(reprDigestOf(bytes2))
        const receipt = extractReceiptFromResponse(paid2)!
        expect(paid2.headers.get("x-receipt")).toBe(receipt.signature)
        const sale = (yield* salesOf(seller.accountId)).find((s) => s.payer === second.buyer.address)!
        const checked = yield* Effect.promise(() => verifyReceipt(receipt as any, jwks, { archive: { sha256: sha256(bytes2), size: bytes2.length } }))
        expect(checked).toEqual({
          valid: true,
          kid: jwks.keys[0]!.kid,
          livemode: true,
          claims: {
            version: 1,
            network: BASE,
            resourceUrl: seller.listing.checkout_url,
            payer: second.buyer.address,
            issuedAt: Math.floor(sale.settledAt!.getTime() / 1000),
            transaction: TX,
            asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            amount: "750000",
            payTo: BASE_WALLET,
            sale: sale.id,
            listing: sale.listingId,
            repository: "Octo-Org/Widget",
            commit: WIDGET_SHA,
            archive: digest,
            deliveredAt: Math.floor(sale.settledAt!.getTime() / 1000),
            livemode: true
          }
        })
        // The official verifier agrees, with the published key.
        expect(yield* Effect.promise(() => verifyReceiptSignatureJWS(receipt as any, jwks.keys[0] as any))).toMatchObject({ commit: WIDGET_SHA })

        // Any field changed (payer, amount, commit, digest, ...) breaks the signature; so do other bytes.
        const claims = claimsOf(receipt.signature)
        for (const [field, value] of Object.entries({ payer: first.buyer.address, amount: "1", payTo: first.buyer.address, commit: PUSHED_SHA, transaction: "0x00", listing: "lst_other", archive: { sha256: "0".repeat(64), size: 1 }, livemode: false, deliveredAt: 1 })) {
          const altered = yield* Effect.promise(() => verifyReceipt(withPayload(receipt.signature, { ...claims, [field]: value }), jwks))
          expect(altered, field).toEqual({ valid: false, reason: "the signature does not match: the receipt was altered or not signed by this key" })
          yield* Effect.promise(() => expect(verifyReceiptSignatureJWS({ format: "jws", signature: withPayload(receipt.signature, { ...claims, [field]: value }) }, jwks.keys[0] as any)).rejects.toThrow())
        }
        const otherBytes = yield* Effect.promise(() => verifyReceipt(receipt as any, jwks, { archive: { sha256: sha256(Buffer.from("other")), size: 5 } }))
        expect(otherBytes).toMatchObject({ valid: false, reason: expect.stringContaining("the bytes differ from the receipt's archive") })
        // A signed offer is not a receipt, though the same key signed it.
        const offer = extractOffersFromPaymentRequired(required)[0] as { signature: string }
        expect(yield* Effect.promise(() => verifyReceipt(offer.signature, jwks))).toMatchObject({ valid: false, reason: expect.stringContaining("not a receipt") })
      }))
  })
})

describe("the commit moved between the 402 and the payment", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("the payment for the old commit is refused before any facilitator call; the fresh 402 offers the new commit, which then sells", () =>
      Effect.gen(function*() {
        const seller = yield* sell("moved@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const { buyer, client } = clientOf()
        const payment = yield* Effect.promise(() => client.createPaymentPayload(required))
        // The seller pushes before the payment arrives.
        yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put(PUSHED))

        const refused = yield* payWith(seller.live, payment)
        expect(refused.status).toBe(402)
        expect(refused.headers.get("payment-response")).toBeNull()
        expect(refused.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
        const fresh = unb64(refused.headers.get("payment-required"))
        expect(fresh.error).toBe("commit_moved")
        const body = JSON.parse(Buffer.from(yield* bytesOf(refused)).toString("utf8"))
        expect(body.detail).toContain(PUSHED_SHA.slice(0, 12))
        expect(calls).toEqual([])
        expect(yield* salesOf(seller.accountId)).toEqual([])
        for (const offer of yield* offersOf(fresh)) expect(offer.commit).toBe(PUSHED_SHA)

        // Paying the fresh offer buys the pushed commit, and its receipt says so.
        facilitatorOk(buyer.address)
        const repaid = yield* payWith(seller.live, yield* Effect.promise(() => client.createPaymentPayload(fresh)))
        const bytes = yield* bytesOf(repaid)
        expect(repaid.status, bytes.toString("utf8").slice(0, 300)).toBe(200)
        expect(bytes.toString("utf8")).toContain("fedcba9 CHANGELOG.md")
        expect(claimsOf(repaid.headers.get("x-receipt")!)).toMatchObject({ commit: PUSHED_SHA, payer: buyer.address })
        expect((yield* salesOf(seller.accountId)).map((s) => s.commitSha)).toEqual([PUSHED_SHA])
      }))
  })
})

describe("the commit moved while the payment was verified", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("the head is read again after verify: the payment is refused before settlement, nothing recorded", () =>
      Effect.gen(function*() {
        const seller = yield* sell("during@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const { buyer, client } = clientOf()
        const payment = yield* Effect.promise(() => client.createPaymentPayload(required))
        // The seller's push lands while the facilitator verifies.
        const control = yield* CodeHostMemoryControl
        answer("verify", () => {
          Effect.runSync(control.put(PUSHED))
          return HttpResponse.json({ isValid: true, payer: buyer.address })
        })
        const refused = yield* payWith(seller.live, payment)
        expect(refused.status).toBe(402)
        expect(unb64(refused.headers.get("payment-required")).error).toBe("commit_moved")
        expect(calls.map((c) => c.path)).toEqual(["/verify"])
        expect(yield* salesOf(seller.accountId)).toEqual([])
      }))
  })
})

describe("the buyer cannot choose the commit", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("a buyer cannot pick the commit: an echoed offer naming another commit, or none readable, is refused and charges nothing", () =>
      Effect.gen(function*() {
        const seller = yield* sell("picker@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const { client } = clientOf()
        const payment: any = yield* Effect.promise(() => client.createPaymentPayload(required))
        const echoed = payment.extensions["offer-receipt"].info.offers as Array<{ signature: string }>
        // A commit the repository never had, one shaped like another repository's, a branch name.
        for (const commit of [WIDGET_SHA.replace("0123", "9999"), "a".repeat(40), "HEAD"]) {
          const forged = echoed.map((o) => ({ ...o, signature: withPayload(o.signature, { ...claimsOf(o.signature), commit }) }))
          const res = yield* payWith(seller.live, { ...payment, extensions: { ...payment.extensions, "offer-receipt": { info: { version: 1, offers: forged } } } })
          expect(res.status, commit).toBe(402)
          expect(unb64(res.headers.get("payment-required")).error).toBe("commit_moved")
        }
        const garbled = yield* payWith(seller.live, { ...payment, extensions: { ...payment.extensions, "offer-receipt": { info: { offers: [{ format: "jws", signature: "not.a.jws" }] } } } })
        expect(garbled.status).toBe(402)
        expect(unb64(garbled.headers.get("payment-required")).error).toBe("offer_mismatch")
        expect(calls).toEqual([])
        expect(yield* salesOf(seller.accountId)).toEqual([])
      }))
  })
})

describe("the published keys", () => {
  layer(LiveApp(), REAL_TIME)((it) => {
    it.effect("JWKS and the did:web document list the signing key under the DID its kid names", () =>
      Effect.gen(function*() {
        const { keys } = yield* publishedKeys
        expect(keys).toEqual([{ kty: "OKP", crv: "Ed25519", x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), kid: "did:web:repomarket.test#test.v2", alg: "EdDSA", use: "sig" }])
        const res = yield* get(`${yield* origin}/.well-known/did.json`)
        expect(res.status).toBe(200)
        const doc = yield* Effect.promise(() => res.json())
        expect(doc).toMatchObject({
          id: "did:web:repomarket.test",
          verificationMethod: [{ id: keys[0]!.kid, type: "JsonWebKey2020", controller: "did:web:repomarket.test", publicKeyJwk: { kty: "OKP", crv: "Ed25519", x: keys[0]!.x } }],
          assertionMethod: [keys[0]!.kid]
        })
        expect(BASE_URL).toBe("http://repomarket.test")
      }))
  })
})

import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import { generateKeyPairSigner } from "@solana/kit"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { createSIWxPayload, encodeSIWxHeader, type SIWxSigner, wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x"
import { wrapFetchWithPayment } from "@x402/fetch"
import { ExactSvmScheme } from "@x402/svm/exact/client"
import { Effect, Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
import { PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { BASE_URL, BASE_WALLET, call, SOLANA_WALLET } from "../support/app.js"
import {
  ClockSkew,
  expectGoods,
  expectProblemResponse,
  expectTestGoods,
  get,
  origin,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  salesOf,
  sell,
  unb64,
  WIDGET_FILENAME
} from "../support/purchase.js"
import { SOLANA_RPC, solanaRpc } from "../adapters/x402/simulatedSupport.js"

/*
 * Re-download with x402 Sign-In-With-X (issue 12): a wallet that paid signs the challenge of a 402 with the
 * official @x402/extensions client helpers and gets the same goods again: no payment, no new sale, no settle.
 * Every test here fails on 46efe82 (no SIWX there: a 402 declares no extension, and a SIGN-IN-WITH-X request
 * is answered with a plain 402).
 */

const BASE_SEPOLIA = "eip155:84532"
const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
const SIWX = "sign-in-with-x"

// The Solana client reads the test USDC mint from the (mocked) RPC; loopback calls to the app pass.
beforeAll(() => solanaRpc.listen({ onUnhandledRequest: "bypass" }))
afterAll(() => solanaRpc.close())

/** Counts settle calls of the test facilitator: a re-download must make none. */
let settles = 0
const CountingSettles = Layer.effect(
  PaymentFacilitator,
  Effect.map(PaymentFacilitator, (f) => ({
    ...f,
    test: { ...f.test, settle: (payment, requirement) => Effect.suspend(() => (settles++, f.test.settle(payment, requirement))) }
  }))
).pipe(Layer.provide(PaymentFacilitatorLive))

const App = () => PurchaseApp({}, CountingSettles)

/** The Sign-In-With-X declaration of a response's `PAYMENT-REQUIRED` header. */
const declarationOf = (res: Response) => {
  const required = unb64(res.headers.get("payment-required"))
  const declared = required.extensions?.[SIWX]
  expect(declared, "a sign-in-with-x extension").toBeDefined()
  return { required, declared }
}

/** GET `url` without headers and read the challenge it carries (a 402, or the 410/409/503 of a checkout that cannot be paid). */
const challengeAt = (url: string, status = 402) =>
  Effect.gen(function*() {
    const res = yield* get(url)
    yield* Effect.promise(() => res.text())
    expect(res.status).toBe(status)
    return declarationOf(res).declared
  })

/**
 * The proof a wallet sends, built by @x402/extensions' client helpers from the declaration. The request URL
 * is the public one (BASE_URL), as a client that reached the service there would pass it.
 */
const prove = (declared: any, signer: SIWxSigner, chainId: string, info: Record<string, unknown> = {}) =>
  Effect.promise(async () => {
    const chain = declared.supportedChains.find((c: { chainId: string }) => c.chainId === chainId)
    expect(chain, `a supported chain ${chainId}`).toBeDefined()
    const payload = await createSIWxPayload({ ...declared.info, ...info, chainId, type: chain.type }, signer, declared.info.uri)
    return encodeSIWxHeader(payload)
  })

const withProof = (url: string, proof: string) => get(url, { "sign-in-with-x": proof })

/** A refused proof: a 402 with fresh requirements to pay and a fresh challenge, naming the reason. */
const expectRefused = (res: Response, reason: string) =>
  Effect.gen(function*() {
    const body = yield* Effect.promise(() => res.text())
    expect(res.status, body).toBe(402)
    expect(res.headers.get("content-disposition")).toBeNull()
    const { declared, required } = declarationOf(res)
    expect(required.error).toBe(reason)
    expect(JSON.parse(body).error).toBe(reason)
    return declared
  })

const evmBuyer = () => {
  const buyer = privateKeyToAccount(generatePrivateKey())
  return { buyer, pay: wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer))) }
}

/** Sells the widget on Base (and Solana) and buys it on the test twin with the official v2 client. */
const boughtOnTwin = (email: string) =>
  Effect.gen(function*() {
    const seller = yield* sell(email, { price_usd: "0.50", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
    const { buyer, pay } = evmBuyer()
    const paid = yield* Effect.promise(() => pay(seller.test))
    const bytes = yield* expectGoods(paid)
    expect(yield* salesOf(seller.accountId)).toHaveLength(1)
    return { seller, buyer, bytes }
  })

/** One app per test: the widget can be listed once per app. */
const alone = <A, E>(name: string, test: () => Effect.Effect<A, E, any>) =>
  layer(App(), REAL_TIME)((it) => it.effect(name, test))

describe("re-download with Sign-In-With-X on the test twin (EVM)", () => {
  {
    alone("every 402 declares the challenge: this checkout's domain and URL, its chains, a nonce, 5 minutes", () =>
      Effect.gen(function*() {
        const seller = yield* sell("declare@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        const uri = `${BASE_URL}/checkout/${seller.listing.checkout_url.split("/").pop()}/test`
        const declared = yield* challengeAt(seller.test)
        expect(declared.info).toMatchObject({
          domain: "repomarket.test",
          uri,
          version: "1",
          statement: "Sign in to re-download what this wallet bought",
          resources: [uri]
        })
        expect(declared.info.nonce).toMatch(/^[0-9a-f]{88}$/)
        expect(Date.parse(declared.info.expirationTime) - Date.parse(declared.info.issuedAt)).toBe(5 * 60 * 1000)
        expect(declared.supportedChains).toEqual([
          { chainId: BASE_SEPOLIA, type: "eip191", signatureScheme: "eip191" },
          { chainId: DEVNET, type: "ed25519", signatureScheme: "siws" }
        ])
        expect(declared.schema.required).toContain("signature")
      }))

    alone("the paying wallet signs in and gets the same archive again: no payment, no new sale, no settle; the proof works once", () =>
      Effect.gen(function*() {
        const { buyer, bytes, seller } = yield* boughtOnTwin("again@example.com")
        const settled = settles
        const proof = yield* prove(yield* challengeAt(seller.test), buyer, BASE_SEPOLIA)

        const again = yield* withProof(seller.test, proof)
        expect(again.headers.get("content-disposition")).toBe(`attachment; filename="${WIDGET_FILENAME}"`)
        expect(again.headers.get("payment-response")).toBeNull()
        expect(receiptOf(again)).toMatch(/^http:\/\/repomarket\.test\/downloads\/sale_/)
        const sameBytes = yield* expectGoods(again)
        expect(Buffer.compare(sameBytes, bytes)).toBe(0)
        expectTestGoods(sameBytes)
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
        expect(settles).toBe(settled)

        // A captured header is worth nothing: the same proof again is refused, with a fresh challenge.
        const fresh = yield* expectRefused(yield* withProof(seller.test, proof), "invalid_siwx_nonce")
        // ...which the wallet may sign.
        expect(Buffer.compare(yield* expectGoods(yield* withProof(seller.test, yield* prove(fresh, buyer, BASE_SEPOLIA))), bytes)).toBe(0)
        // The official wrapper makes the round trip itself (402, sign, retry). The front door hands out the same
        // remembered 402, so the same (now spent) nonce, for up to RESPONSE_CACHE_MS: wait that out.
        yield* Effect.sleep("2100 millis")
        const o = yield* origin
        const viaPublicUrl = (input: string | URL | Request, init?: RequestInit) =>
          fetch(new Request(String(input instanceof Request ? input.url : input).replace(BASE_URL, o), input instanceof Request ? input : init))
            .then((res) => new Response(res.body, res))
        const signedIn = yield* Effect.promise(() => wrapFetchWithSIWx(viaPublicUrl, buyer)(fresh.info.uri))
        expect(Buffer.compare(yield* expectGoods(signedIn), bytes)).toBe(0)
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
        expect(settles).toBe(settled)
      }))

    alone("another wallet's proof gets no goods: a 402 to pay, naming why", () =>
      Effect.gen(function*() {
        const { seller } = yield* boughtOnTwin("stranger@example.com")
        const stranger = privateKeyToAccount(generatePrivateKey())
        const res = yield* withProof(seller.test, yield* prove(yield* challengeAt(seller.test), stranger, BASE_SEPOLIA))
        const declared = yield* expectRefused(res, "siwx_no_purchase")
        expect(declared.info.nonce).toMatch(/^[0-9a-f]{88}$/)
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
      }))

    alone("a forged nonce, a proof for another checkout's URL, and a malformed header are refused", () =>
      Effect.gen(function*() {
        const { buyer, seller } = yield* boughtOnTwin("forged@example.com")
        const declared = yield* challengeAt(seller.test)
        const nonce: string = declared.info.nonce
        const forged = nonce.slice(0, 16) + "ffffffff" + nonce.slice(24)
        yield* expectRefused(yield* withProof(seller.test, yield* prove(declared, buyer, BASE_SEPOLIA, { nonce: forged })), "invalid_siwx_nonce")
        // A later expiry than the challenge's is not the challenge's.
        const later = new Date(Date.parse(declared.info.expirationTime) + 60 * 60 * 1000).toISOString()
        yield* expectRefused(
          yield* withProof(seller.test, yield* prove(declared, buyer, BASE_SEPOLIA, { expirationTime: later })),
          "invalid_siwx_expiration_time"
        )

        // Another listing's checkout: the buyer signs its challenge, then presents the proof here.
        const other = yield* sell("forged-other@example.com", { host_url: "https://github.com/octo-org/gadget", price_usd: "0.50", wallet_base: BASE_WALLET })
        const elsewhere = yield* prove(yield* challengeAt(other.test), buyer, BASE_SEPOLIA)
        yield* expectRefused(yield* withProof(seller.test, elsewhere), "invalid_siwx_uri_mismatch")
        // The live twin of the same checkout is another URL too (and live sales are not test sales).
        yield* expectRefused(yield* withProof(seller.test, yield* prove(declared, buyer, BASE_SEPOLIA, { uri: declared.info.uri.replace(/\/test$/, "") })), "invalid_siwx_uri_mismatch")

        const malformed = yield* withProof(seller.test, "not base64 json!")
        const problem = yield* expectProblemResponse(malformed, 400, "invalid_request")
        expect(problem.errors).toEqual([expect.objectContaining({ field: "SIGN-IN-WITH-X" })])
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
      }))

    alone("after a reprice the wallet still re-downloads on the OLD checkout URL: its 410 carries the challenge", () =>
      Effect.gen(function*() {
        const { buyer, bytes, seller } = yield* boughtOnTwin("reprice@example.com")
        const patched = yield* call("PATCH", "/repos/octo-org/widget", { token: seller.key, body: { price_usd: "0.75" } })
        expect(patched.status, patched.text).toBe(200)
        expect(patched.json.test_checkout_url).not.toBe(seller.listing.test_checkout_url)

        const gone = yield* get(seller.test)
        const problem = yield* expectProblemResponse(gone.clone(), 410, "checkout_gone")
        expect(problem.page).toBe(`${BASE_URL}/r/Octo-Org/Widget`)
        const { declared, required } = declarationOf(gone)
        expect(required.accepts).toEqual([])
        expect(declared.info.uri).toBe(`${BASE_URL}${new URL(seller.listing.test_checkout_url).pathname}`)

        const again = yield* withProof(seller.test, yield* prove(declared, buyer, BASE_SEPOLIA))
        expect(Buffer.compare(yield* expectGoods(again), bytes)).toBe(0)
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
        // A bad proof on the old URL: still 410, with a fresh challenge and the reason.
        const stranger = privateKeyToAccount(generatePrivateKey())
        const refused = yield* withProof(seller.test, yield* prove(declared, stranger, BASE_SEPOLIA))
        const refusal = yield* expectProblemResponse(refused.clone(), 410, "checkout_gone")
        expect(refusal.reason).toBe("siwx_no_purchase")
        expect(declarationOf(refused).required.error).toBe("siwx_no_purchase")
      }))
  }
})

describe("re-download with Sign-In-With-X, an expired challenge", () => {
  {
    alone("a challenge signed in time but presented after its 5 minutes is refused", () =>
      Effect.gen(function*() {
        const { buyer, seller } = yield* boughtOnTwin("expired@example.com")
        const proof = yield* prove(yield* challengeAt(seller.test), buyer, BASE_SEPOLIA)
        yield* Effect.flatMap(ClockSkew, (c) => c.advance("301 seconds"))
        yield* expectRefused(yield* withProof(seller.test, proof), "invalid_siwx_expired")
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
      }))
  }
})

describe("re-download with Sign-In-With-X on the test twin (Solana, SIWS ed25519)", () => {
  {
    alone("a Solana wallet that paid signs in (SIWS) and gets the same archive; another Solana wallet gets nothing", () =>
      Effect.gen(function*() {
        const seller = yield* sell("siws@example.com", { price_usd: "0.25", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        const buyer = yield* Effect.promise(() => generateKeyPairSigner())
        const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: SOLANA_RPC }))
        const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.test))
        const bytes = yield* expectGoods(paid)
        const settled = settles

        const again = yield* withProof(seller.test, yield* prove(yield* challengeAt(seller.test), buyer as unknown as SIWxSigner, DEVNET))
        const sameBytes = yield* expectGoods(again)
        expect(Buffer.compare(sameBytes, bytes)).toBe(0)
        expectTestGoods(sameBytes)
        expect(yield* salesOf(seller.accountId)).toHaveLength(1)
        expect(settles).toBe(settled)

        // Another Solana wallet gets nothing.
        const other = yield* Effect.promise(() => generateKeyPairSigner())
        yield* expectRefused(yield* withProof(seller.test, yield* prove(yield* challengeAt(seller.test), other as unknown as SIWxSigner, DEVNET)), "siwx_no_purchase")
      }))
  }
})

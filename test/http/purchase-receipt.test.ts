import { expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { verifyReceiptSignatureJWS } from "@x402/extensions/offer-receipt"
import { wrapFetchWithPayment } from "@x402/fetch"
import { ConfigProvider, Context, Effect, Either, Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeReceiptSigner, ReceiptSignerLive } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { parseSecretKeys } from "../../adapters/crypto/SecretKeys.js"
import { CodeHostMemory, CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { verifyProvenance, verifyReceipt } from "../../index.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { BASE_URL, BASE_WALLET, DEFAULT_REPOS, PUBLIC_REPO } from "../support/app.js"
import {
  ClockSkew,
  expectGoods,
  expectProblemResponse,
  expectTestGoods,
  get,
  local,
  onlySale,
  origin,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  sell,
  untar,
  WIDGET_FILENAME,
  WIDGET_SHA
} from "../support/purchase.js"

/** The commit of each tree the code host was asked for, to check the goods list the paid commit's files. */
const treeShas: Array<string> = []

/** The in-memory code host (and its control), recording `tree` calls. */
const RecordingCodeHost = Layer.effectContext(
  Effect.gen(function*() {
    const host = yield* CodeHost
    const control = yield* CodeHostMemoryControl
    return Context.make(CodeHost, {
      ...host,
      tree: (info, token) => Effect.suspend(() => (treeShas.push(info.headSha), host.tree(info, token)))
    }).pipe(Context.add(CodeHostMemoryControl, control))
  })
).pipe(Layer.provide(CodeHostMemory(DEFAULT_REPOS)))

const ReceiptApp = () => PurchaseApp({}, RecordingCodeHost)

/** Buys the widget through the test twin with the official v2 client; returns the paid response's parts. */
const buy = (email: string) =>
  Effect.gen(function*() {
    const seller = yield* sell(email, { price_usd: "0.50", wallet_base: BASE_WALLET })
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())))
    const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.test))
    const bytes = yield* expectGoods(paid)
    const receipt = receiptOf(paid)
    return { seller, bytes, receipt, download: yield* local(receipt) }
  })

const NEW_SHA = "fedcba9876543210fedcba9876543210fedcba98"
const DAY = 24 * 60 * 60 * 1000

layer(ReceiptApp(), REAL_TIME)("the receipt link", (it) => {
  it.effect("re-downloads the same goods of the same commit, even after the repo moved on", () =>
    Effect.gen(function*() {
      const { bytes, download, receipt, seller } = yield* buy("receipt@example.com")
      expect(receipt).toMatch(/^http:\/\/repomarket\.test\/downloads\/sale_[A-Za-z0-9]+\.[A-Za-z0-9_-]+$/)

      const again = yield* get(download)
      const againBytes = yield* expectGoods(again)
      expect(againBytes.equals(bytes)).toBe(true)
      expect(receiptOf(again)).toBe(receipt)
      expect(again.headers.get("payment-response")).toBeNull()
      expect(again.headers.get("x-payment-response")).toBeNull()

      // A new commit on the default branch: the receipt still delivers the paid commit's tree.
      yield* Effect.flatMap(CodeHostMemoryControl, (c) =>
        c.put({ ...PUBLIC_REPO, headSha: NEW_SHA, files: { ...PUBLIC_REPO.files, "src/later.ts": "export const later = 1\n" } }))
      treeShas.length = 0
      const moved = yield* get(download)
      const movedBytes = yield* expectGoods(moved)
      expect(moved.headers.get("content-disposition")).toBe(`attachment; filename="${WIDGET_FILENAME}"`)
      const manifest = JSON.parse(Object.entries(untar(movedBytes)).find(([p]) => p.endsWith("MANIFEST.json"))![1])
      expect(manifest.commit).toBe(WIDGET_SHA)
      expect(treeShas).toEqual([WIDGET_SHA])
      expect((yield* onlySale(seller.accountId)).commitSha).toBe(WIDGET_SHA)
    }))
})

layer(ReceiptApp(), REAL_TIME)("receipt expiry", (it) => {
  it.effect("works until 7 days after settlement, then answers 410 receipt_expired pointing to the repo page", () =>
    Effect.gen(function*() {
      const { bytes, download } = yield* buy("expiry@example.com")
      const clock = yield* ClockSkew
      yield* clock.advance(7 * DAY - 60_000)
      expectTestGoods(yield* expectGoods(yield* get(download)))
      yield* clock.advance(2 * 60_000)
      const problem = yield* expectProblemResponse(yield* get(download), 410, "receipt_expired")
      expect(problem.page).toMatch(/\/r\/Octo-Org\/Widget$/)
      expect(bytes.length).toBeGreaterThan(0)
    }))
})

layer(ReceiptApp(), REAL_TIME)("forged receipts", (it) => {
  it.effect("a token with a wrong MAC, another sale's id, or no MAC at all is 404", () =>
    Effect.gen(function*() {
      const { download } = yield* buy("forged@example.com")
      const token = download.slice(download.lastIndexOf("/") + 1)
      const [saleId, mac] = token.split(".") as [string, string]
      const base = download.slice(0, download.lastIndexOf("/") + 1)
      const flipped = (mac[0] === "A" ? "B" : "A") + mac.slice(1)
      for (const forged of [`${saleId}.${flipped}`, `${saleId}`, `${saleId}.`, `sale_${"x".repeat(22)}.${mac}`, "x".repeat(150)]) {
        yield* expectProblemResponse(yield* get(base + forged), 404, "not_found")
      }
      yield* expectGoods(yield* get(download))
    }))
})

/** The JWK Set the app publishes at /.well-known/jwks.json. */
const publishedKeys = Effect.flatMap(Effect.flatMap(origin, (o) => get(`${o}/.well-known/jwks.json`)), (res) => Effect.promise(() => res.json() as Promise<{ keys: Array<any> }>))

layer(ReceiptApp(), REAL_TIME)("a test-twin receipt", (it) => {
  it.effect("does not verify as a paid purchase; accepted when asked, it says it is a test purchase", () =>
    Effect.gen(function*() {
      const seller = yield* sell("twin-receipt@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())))
      const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, client)(seller.test))
      yield* expectGoods(paid)
      const receipt = paid.headers.get("x-receipt")!
      const jwks = yield* publishedKeys
      expect(yield* Effect.promise(() => verifyReceipt(receipt, jwks))).toEqual({
        valid: false,
        reason: "a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest)"
      })
      expect(yield* Effect.promise(() => verifyReceipt(receipt, jwks, { allowTest: true }))).toMatchObject({
        valid: true,
        livemode: false,
        test: "test purchase, simulated money",
        claims: { livemode: false, transaction: expect.stringMatching(/^sim_/) }
      })
    }))
})

/*
 * Staging and production sharing SECRET_KEYS: this app is "production" (BASE_URL http://repomarket.test) with the
 * real signer over SECRET_KEYS; "staging" is the same SECRET_KEYS at another BASE_URL.
 */
const SECRET_KEYS = `k1:${Buffer.alloc(32, 5).toString("base64")}`
const ring = Either.getOrThrow(parseSecretKeys(SECRET_KEYS))
const SignerFromSecretKeys = ReceiptSignerLive.pipe(
  Layer.provide(Layer.succeed(PublicOrigin, { baseUrl: BASE_URL })),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SECRET_KEYS", SECRET_KEYS]]))))
)
const staging = makeReceiptSigner(ring, "https://staging.repomarket.test")

layer(PurchaseApp({}, SignerFromSecretKeys), REAL_TIME)("a deployment's signing key", (it) => {
  it.effect("is derived from SECRET_KEYS for its BASE_URL: another deployment's receipts and provenance do not verify against it", () =>
    Effect.gen(function*() {
      const { download } = yield* buy("deployment@example.com")
      const jwks = yield* publishedKeys
      expect(jwks.keys.map((k) => k.kid)).toEqual(["did:web:repomarket.test#k1.v2", "did:web:repomarket.test#k1"])
      // Another process of the same deployment derives the same keys.
      expect(jwks.keys).toEqual(makeReceiptSigner(ring, BASE_URL).keys)
      // Staging signs with another key, though its SECRET_KEYS are the same.
      expect(jwks.keys.map((k) => k.x)).not.toContain(staging.keys[0]!.x)

      const receipt = (yield* get(download)).headers.get("x-receipt")!
      expect(yield* Effect.promise(() => verifyReceipt(receipt, jwks, { allowTest: true }))).toMatchObject({ valid: true, kid: "did:web:repomarket.test#k1.v2" })
      expect(yield* Effect.promise(() => verifyReceipt(receipt, { keys: staging.keys }, { allowTest: true }))).toMatchObject({ valid: false })
      // x402's own verifier takes the key it is handed: staging's does not verify production's receipt.
      yield* Effect.promise(() => expect(verifyReceiptSignatureJWS({ format: "jws", signature: receipt }, staging.keys[0] as any)).rejects.toThrow())

      // Production's provenance with its keyid rewritten to each of staging's keys: none verifies there.
      const served = yield* get(`${download}/provenance`)
      expect(served.status).toBe(200)
      const attested: any = yield* Effect.promise(() => served.json())
      expect(yield* Effect.promise(() => verifyProvenance(attested, jwks, { allowTest: true }))).toMatchObject({ valid: true })
      for (const key of staging.keys) {
        const rewritten = { ...attested, signatures: [{ ...attested.signatures[0], keyid: key.kid }] }
        expect(yield* Effect.promise(() => verifyProvenance(rewritten, { keys: staging.keys }, { allowTest: true })), key.kid).toMatchObject({ valid: false })
      }
    }))
})

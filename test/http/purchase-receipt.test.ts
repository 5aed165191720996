import { expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Context, Effect, Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemory, CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { BASE_WALLET, DEFAULT_REPOS, PUBLIC_REPO } from "../support/app.js"
import {
  ClockSkew,
  expectGoods,
  expectProblemResponse,
  expectTestGoods,
  get,
  local,
  onlySale,
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

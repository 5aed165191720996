import { createHash } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { decodeSignedOffers, extractOffersFromPaymentRequired } from "@x402/extensions/offer-receipt"
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { verifyProvenance, verifyReceipt } from "../../index.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { BASE_WALLET, call, PUBLIC_REPO } from "../support/app.js"
import {
  acceptedOf,
  bytesOf,
  challenge,
  ClockSkew,
  expectGoods,
  expectProblemResponse,
  get,
  local,
  newPaymentId,
  onlySale,
  origin,
  payWith,
  PurchaseApp,
  REAL_TIME,
  receiptOf,
  sell,
  signEvm,
  untar,
  unb64,
  WIDGET_SHA,
  withPaymentId
} from "../support/purchase.js"

/*
 * Issue 30, updates after purchase: a listing sold with `updates_days` lets its buyer fetch the listing's current
 * commit, without paying again, for that many days after settlement — by any receipt link (`<link>/latest`), by
 * Sign-In-With-X with the paying wallet, or by retrying the purchase with its payment-identifier id, each with
 * `?updates=latest` on the checkout. A newer commit is a new signed delivery (receipt, provenance, its own link),
 * recorded once per commit. Past the window, without one, or after a takedown: 403 with the reason, and the
 * purchased commit stays the buyer's. Purchases are made by the official @x402 clients on the test twin.
 */

const DAY_MS = 24 * 60 * 60 * 1000
const PUSHED_SHA = "fedcba9876543210fedcba9876543210fedcba98"
const PUSHED = { ...PUBLIC_REPO, headSha: PUSHED_SHA, files: { ...PUBLIC_REPO.files, "CHANGELOG.md": "a fix after the sale\n" } }

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const manifestCommit = (bytes: Uint8Array) =>
  JSON.parse(Object.entries(untar(bytes)).find(([path]) => path.endsWith("MANIFEST.json"))![1]).commit as string
const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split(".")[1]!, "base64url").toString("utf8"))

const publishedKeys = Effect.gen(function*() {
  const res = yield* get(`${yield* origin}/.well-known/jwks.json`)
  return (yield* Effect.promise(() => res.json())) as { keys: ReadonlyArray<any> }
})

/** A URL the app hands out (on its public BASE_URL), fetched over loopback. */
const at = (url: string) => Effect.flatMap(local(url), (u) => get(u))

/** A 200 archive, whichever commit it is of; its bytes. */
const goods = (res: Response) =>
  Effect.gen(function*() {
    const bytes = yield* bytesOf(res)
    expect(res.status, bytes.toString("utf8").slice(0, 500)).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/gzip")
    return bytes
  })

const push = Effect.flatMap(CodeHostMemoryControl, (c) => c.put(PUSHED))

/** Lists the widget with `updates_days` (when given) and buys it on the test twin with the official client. */
const bought = (email: string, updatesDays?: number) =>
  Effect.gen(function*() {
    const seller = yield* sell(email, { price_usd: "0.50", wallet_base: BASE_WALLET, ...(updatesDays === undefined ? {} : { updates_days: updatesDays }) })
    const buyer = privateKeyToAccount(generatePrivateKey())
    const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))(seller.test))
    const bytes = yield* expectGoods(paid)
    return { seller, buyer, bytes, receipt: receiptOf(paid), signed: paid.headers.get("x-receipt")! }
  })

/** `<receipt>/latest` refused with `code`, naming the purchase's own link, which still serves the commit paid for. */
const refusedButKept = (receipt: string, code: string) =>
  Effect.gen(function*() {
    const problem = yield* expectProblemResponse(yield* at(`${receipt}/latest`), 403, code)
    expect(problem.receipt).toBe(receipt)
    expect(problem.detail).toContain(receipt)
    expect(manifestCommit(yield* goods(yield* at(receipt)))).toBe(WIDGET_SHA)
  })

const deliveriesOf = (saleId: string) => Effect.flatMap(SaleLedger, (l) => l.listDeliveries([saleId as any]))

const alone = <A, E>(name: string, test: () => Effect.Effect<A, E, any>) =>
  layer(PurchaseApp(), REAL_TIME)((it) => it.effect(name, test))

describe("within the update window", () => {
  alone("a pushed commit is a new signed delivery: its bytes, receipt, link and provenance; once per commit; the purchase stays", () =>
    Effect.gen(function*() {
      const { bytes, buyer, receipt, seller, signed } = yield* bought("updates@example.com", 30)
      const { keys } = yield* publishedKeys
      const sale = yield* onlySale(seller.accountId)
      expect(sale.updatesDays).toBe(30)
      expect(claimsOf(signed).updatesUntil).toBe(Math.floor((sale.settledAt!.getTime() + 30 * DAY_MS) / 1000))

      // Nothing newer yet: the purchase's own goods, no delivery recorded.
      const same = yield* at(`${receipt}/latest`)
      expect(sha256(yield* goods(same))).toBe(sha256(bytes))
      expect(receiptOf(same)).toBe(receipt)
      expect(yield* deliveriesOf(sale.id)).toHaveLength(0)

      yield* push
      const updated = yield* at(`${receipt}/latest`)
      const updatedBytes = yield* goods(updated)
      expect(manifestCommit(updatedBytes)).toBe(PUSHED_SHA)
      expect(updated.headers.get("content-disposition")).toContain(PUSHED_SHA.slice(0, 7))
      expect(updated.headers.get("repr-digest")).toBe(`sha-256=:${createHash("sha256").update(updatedBytes).digest("base64")}:`)
      const link = receiptOf(updated)
      expect(link).not.toBe(receipt)
      expect(link).toMatch(/\/downloads\/dlv_[A-Za-z0-9]+\.[A-Za-z0-9_-]+$/)

      // The new receipt verifies with the published key and names the update: same payment, new commit and archive.
      const newReceipt = updated.headers.get("x-receipt")!
      const checked = yield* Effect.promise(() => verifyReceipt(newReceipt, keys as any, { allowTest: true }))
      expect(checked).toMatchObject({
        valid: true,
        claims: {
          commit: PUSHED_SHA,
          sale: sale.id,
          transaction: sale.transaction,
          payer: buyer.address,
          archive: { sha256: sha256(updatedBytes), size: updatedBytes.length },
          delivery: expect.stringMatching(/^dlv_/)
        }
      })
      const altered = newReceipt.split(".")
      altered[1] = Buffer.from(JSON.stringify({ ...claimsOf(newReceipt), commit: WIDGET_SHA })).toString("base64url")
      expect(yield* Effect.promise(() => verifyReceipt(altered.join("."), keys as any, { allowTest: true }))).toMatchObject({ valid: false })

      // Its own link serves the same bytes; its provenance attests the pushed commit.
      expect(sha256(yield* goods(yield* at(link)))).toBe(sha256(updatedBytes))
      const provenance = yield* at(`${link}/provenance`)
      const envelope = yield* Effect.promise(() => provenance.json())
      const attested = yield* Effect.promise(() => verifyProvenance(envelope, keys as any, { allowTest: true }))
      expect(attested).toMatchObject({ valid: true, statement: { subject: [{ digest: { sha256: sha256(updatedBytes) } }], predicate: { commit: PUSHED_SHA, sale: sale.id } } })

      // Asked again (by either link): the same delivery, recorded once; the purchase's link still serves the paid commit.
      expect(receiptOf(yield* at(`${receipt}/latest`))).toBe(link)
      expect(receiptOf(yield* at(`${link}/latest`))).toBe(link)
      const recorded = yield* deliveriesOf(sale.id)
      expect(recorded.map((d) => d.commitSha)).toEqual([PUSHED_SHA])
      // The seller's ledger shows the sale, the commit it bought and the update delivered; so does the dashboard.
      const ledger = yield* call("GET", "/my/sales?livemode=false", { token: seller.key })
      expect(ledger.json.sales[0]).toMatchObject({
        id: sale.id,
        commit: WIDGET_SHA,
        updates_days: 30,
        updates: [{ id: recorded[0]!.id, commit: PUSHED_SHA, delivered_at: recorded[0]!.deliveredAt.toISOString() }]
      })
      const original = yield* at(receipt)
      expect(manifestCommit(yield* goods(original))).toBe(WIDGET_SHA)
      expect(yield* onlySale(seller.accountId)).toMatchObject({ id: sale.id, commitSha: WIDGET_SHA })

      // A seller who shortens the window later takes nothing from this buyer.
      const patched = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { updates_days: 0 } })
      expect(patched.status, patched.text).toBe(200)
      yield* goods(yield* at(`${receipt}/latest`))
    }))

  alone("the 402's signed offers name the window a payment buys", () =>
    Effect.gen(function*() {
      const seller = yield* sell("offer-window@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET, updates_days: 14 })
      const { required } = yield* challenge(seller.test)
      const offers = decodeSignedOffers(extractOffersFromPaymentRequired(required)) as ReadonlyArray<any>
      expect(offers.map((o) => o.updatesDays)).toEqual(required.accepts.map(() => 14))
    }))

  alone("a window changed between the 402 and the payment: the payment is refused before any charge, and the next 402 names the new window", () =>
    Effect.gen(function*() {
      const seller = yield* sell("offer-window-moved@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET, updates_days: 14 })
      const { required } = yield* challenge(seller.test)
      const patched = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: seller.key, body: { updates_days: 3 } })
      expect(patched.status, patched.text).toBe(200)
      const payment = yield* Effect.promise(() =>
        new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey()))).createPaymentPayload(required))
      const refused = yield* payWith(seller.test, payment)
      yield* bytesOf(refused)
      expect(refused.status).toBe(402)
      const again = unb64(refused.headers.get("payment-required"))
      expect(again.error).toBe("offer_mismatch")
      expect((decodeSignedOffers(extractOffersFromPaymentRequired(again)) as ReadonlyArray<any>)[0].updatesDays).toBe(3)
      expect(yield* Effect.flatMap(SaleLedger, (l) => l.listByAccount(seller.accountId, { limit: 10 }))).toMatchObject({ sales: [] })
      // Paying the new offer buys the new window.
      const paid = yield* Effect.promise(() =>
        wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey()))))(seller.test))
      yield* expectGoods(paid)
      expect((yield* onlySale(seller.accountId)).updatesDays).toBe(3)
    }))

  alone("with the paying wallet (Sign-In-With-X) and ?updates=latest", () =>
    Effect.gen(function*() {
      const { buyer, seller } = yield* bought("updates-siwx@example.com", 30)
      yield* push
      const url = `${seller.test}?updates=latest`
      // Another value of the flag is bad input: 400 naming it.
      const bad = yield* get(`${seller.test}?updates=everything`, { "sign-in-with-x": "x" })
      yield* bytesOf(bad)
      expect(bad.status).toBe(400)
      const res402 = yield* get(url)
      expect(res402.status).toBe(402)
      const declared = unb64(res402.headers.get("payment-required")).extensions["sign-in-with-x"]
      const chain = declared.supportedChains.find((c: any) => c.chainId.startsWith("eip155:"))
      const proof = yield* Effect.promise(async () =>
        encodeSIWxHeader(await createSIWxPayload({ ...declared.info, chainId: chain.chainId, type: chain.type }, buyer, declared.info.uri)))
      const updated = yield* get(url, { "sign-in-with-x": proof })
      expect(manifestCommit(yield* goods(updated))).toBe(PUSHED_SHA)
      expect(receiptOf(updated)).toMatch(/\/downloads\/dlv_/)
    }))

  alone("by retrying the purchase with its payment-identifier id and ?updates=latest: no second charge", () =>
    Effect.gen(function*() {
      const seller = yield* sell("updates-id@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET, updates_days: 30 })
      const buyer = privateKeyToAccount(generatePrivateKey())
      const { required } = yield* challenge(seller.test)
      const accepted = acceptedOf(required, "eip155:84532")
      const signature = withPaymentId(yield* signEvm(buyer, required, accepted), newPaymentId())
      expect(manifestCommit(yield* goods(yield* payWith(seller.test, signature)))).toBe(WIDGET_SHA)
      yield* push
      const updated = yield* payWith(`${seller.test}?updates=latest`, signature)
      expect(manifestCommit(yield* goods(updated))).toBe(PUSHED_SHA)
      expect(receiptOf(updated)).toMatch(/\/downloads\/dlv_/)
      // Without the flag the same retry is the commit paid for; one sale all along.
      expect(manifestCommit(yield* goods(yield* payWith(seller.test, signature)))).toBe(WIDGET_SHA)
      expect((yield* onlySale(seller.accountId)).commitSha).toBe(WIDGET_SHA)
    }))
})

describe("outside the update window", () => {
  alone("past it: 403 updates_window_closed naming the purchase's own link, which still serves the paid commit; nothing recorded", () =>
    Effect.gen(function*() {
      const { receipt, seller } = yield* bought("updates-closed@example.com", 1)
      yield* push
      yield* Effect.flatMap(ClockSkew, (c) => c.advance(DAY_MS + 60_000))
      yield* refusedButKept(receipt, "updates_window_closed")
      expect(yield* deliveriesOf((yield* onlySale(seller.accountId)).id)).toHaveLength(0)
    }))

  alone("a listing sold without updates: 403 updates_not_included", () =>
    Effect.gen(function*() {
      const { receipt } = yield* bought("updates-none@example.com")
      yield* push
      yield* refusedButKept(receipt, "updates_not_included")
    }))

  alone("after a takedown: 403 listing_taken_down; the purchase's link still serves the paid commit", () =>
    Effect.gen(function*() {
      const { receipt, seller } = yield* bought("updates-down@example.com", 30)
      yield* push
      const down = yield* call("DELETE", "/repos/Octo-Org/Widget", { token: seller.key })
      expect(down.status, down.text).toBeLessThan(300)
      yield* refusedButKept(receipt, "listing_taken_down")
    }))

  alone("a forged or altered receipt token is 404, and costs nothing", () =>
    Effect.gen(function*() {
      const { receipt, seller } = yield* bought("updates-forged@example.com", 30)
      yield* push
      const token = receipt.slice(receipt.lastIndexOf("/") + 1)
      const [id, mac] = token.split(".") as [string, string]
      const base = receipt.slice(0, receipt.lastIndexOf("/") + 1)
      for (const forged of [`${id}.${(mac[0] === "A" ? "B" : "A") + mac.slice(1)}`, `dlv_${"x".repeat(22)}.${mac}`, id]) {
        const res = yield* at(`${base}${forged}/latest`)
        yield* bytesOf(res)
        expect(res.status).toBe(404)
      }
      expect(yield* deliveriesOf((yield* onlySale(seller.accountId)).id)).toHaveLength(0)
    }))
})

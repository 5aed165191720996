/*
 * Updates after purchase (issue 30) on memory adapters: within the update window a sale was sold with
 * (`Sale.updatesDays` days after settlement), its buyer fetches the listing's current commit without paying
 * again, as a new update delivery on the ledger with its own receipt link and signed receipt. Refusals (no
 * updates, the window closed, the listing taken down) name their reason and the purchased commit's own link.
 * Sales are seeded in the memory ledger, or bought for real in test mode (an EIP-3009 authorization signed with
 * viem) to retry with the buyer's payment-identifier id; "the seller pushes" is the memory code host's `put`
 * with another head; time moves with the TestClock.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Redacted, Stream, TestClock, Tracer } from "effect"
import { gunzipSync } from "node:zlib"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { offersExtension } from "../../codec/OfferReceipt.js"
import type { Checkout } from "../../domain/Checkout.js"
import { type DeliveryId, RepoRef, type SaleId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { parseJws, type ReceiptClaims, unixSeconds } from "../../domain/ReceiptClaims.js"
import { RECEIPT_TTL_MS, receiptToken } from "../../domain/rules/Receipt.js"
import { Sale } from "../../domain/Sale.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { FacilitatorError, type SubmittedPayment } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { StorageError } from "../../ports/StorageError.js"
import { WalletProof } from "../../ports/WalletProof.js"
import { Listings } from "../../domain/usecases/Listings.js"
import type { Goods } from "../../domain/usecases/Purchases.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import { REDOWNLOADS_PER_RECEIPT_PER_HOUR, Redownloads } from "../../domain/usecases/Redownloads.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { aListing, aSale, unique } from "../../testing/Fixtures.js"
import { atNow, BASE_URL, brief, failureOf, listedWidget, NOW, portsOf, SHA, sold, WIDGET } from "./memoryApp.js"
import { type Answers, facilitatorLayer, signedPayment, stubFacilitator } from "./support.js"

/** The commit the seller pushes after the sale (lower case, as the code host names it). */
const NEW_SHA = "fedcba9876543210fedcba9876543210fedcba98"
const DAY_MS = 24 * 60 * 60 * 1000
const CLIENT = "203.0.113.30"
const TEST_NETWORK = "eip155:84532"
const WIDGET_REF = new RepoRef({ owner: WIDGET.owner, name: WIDGET.name })
const PAGE = `${BASE_URL}/r/Octo-Org/Widget`

type Ledger = SaleLedger["Type"]

/** A wallet proof that proves what it says (a JSON ProvenWallet): the SIWX signature is WalletProofSiwx's to test. */
const WalletProofTrusting = Layer.succeed(WalletProof, {
  verify: (proof) =>
    Effect.sync(() => {
      const w = JSON.parse(proof) as { address: string; network: string; nonce: string; issuedAt: string; expiresAt: string }
      return { address: w.address, network: w.network, nonce: w.nonce, issuedAt: new Date(w.issuedAt), expiresAt: new Date(w.expiresAt) }
    })
})

/**
 * The use cases as memoryApp composes them, over its ports with a trusting wallet proof, the ledger decorated by
 * `wrap`, and the test facilitator scripted by `facilitator` when given (else memoryPorts' simulated one).
 */
const appOf = (
  options: { readonly wrap?: (ledger: Ledger) => Ledger; readonly facilitator?: Answers; readonly wrapHost?: (host: CodeHost["Type"]) => CodeHost["Type"] } = {}
) => {
  const overrides = Layer.mergeAll(
    Layer.effect(SaleLedger, Effect.map(SaleLedger, options.wrap ?? ((l) => l))),
    WalletProofTrusting,
    options.facilitator === undefined
      ? Layer.empty
      : facilitatorLayer({ live: Option.none(), test: stubFacilitator(options.facilitator) })
  ).pipe(Layer.provideMerge(portsOf(options.wrapHost === undefined ? {} : { wrapHost: options.wrapHost })))
  return Redownloads.Default.pipe(
    Layer.provideMerge(Purchases.Default),
    Layer.provideMerge(Listings.Default),
    Layer.provideMerge(Settlements.Default),
    Layer.provideMerge(overrides)
  )
}

const run = <A, E>(effect: Effect.Effect<A, E, any>, options?: Parameters<typeof appOf>[0]) =>
  Effect.provide(Effect.zipRight(atNow, effect), appOf(options)) as Effect.Effect<A, E>

/** The seller pushes `headSha` (with a file the purchase did not have). */
const push = (headSha: string) =>
  Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha, files: { ...WIDGET.files, "CHANGELOG.md": "## 2.0\n" } }))

const receipted = (token: string) => Effect.flatMap(Purchases, (p) => p.receipted(token))
const eligible = (sale: Sale) => Effect.flatMap(Purchases, (p) => p.updateEligible(sale))
const deliverLatest = (sale: Sale, listing: Listing) => Effect.flatMap(Purchases, (p) => p.deliverLatest(sale, listing))
/** Eligible, then delivered: the listing's current commit for the sale. */
const latest = (sale: Sale) => Effect.flatMap(eligible(sale), (listing) => deliverLatest(sale, listing))
const download = (token: string) => Effect.flatMap(Purchases, (p) => p.download(token))
const deliveries = (sale: Sale) => Effect.flatMap(SaleLedger, (l) => l.listDeliveries([sale.id]))
/** The download link of a sale or an update delivery. */
const linkOf = (id: SaleId | DeliveryId) => Effect.map(SecretBox, (box) => `${BASE_URL}/downloads/${receiptToken(id, box.mac)}`)
const tokenOf = (receipt: string) => receipt.slice(`${BASE_URL}/downloads/`.length)
/** The claims of a signed receipt. */
const claimsOf = (signed: string | null): ReceiptClaims => {
  expect(signed).not.toBeNull()
  return parseJws(signed!)!.payload as ReceiptClaims
}
/** The bytes of a goods body. */
const bytesOf = (body: Goods["body"]) =>
  Effect.map(Stream.runCollect(Stream.orDie(body)), (chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks)))
/** The test twin's goods, unpacked as text (a tar: the manifest and note are plain in it). */
const textOf = (goods: Goods) => Effect.map(bytesOf(goods.body), (bytes) => gunzipSync(bytes).toString("utf8"))
/** What a refusal leaves the buyer: the purchased commit, named by its first 12 characters, and its link. */
const keeps = (receipt: string, commit = SHA.slice(0, 12)) => `The commit you paid for (${commit}) stays yours at ${receipt}.`

describe("Purchases.receipted: the settled sale a receipt token names", () => {
  it.effect("a purchase's own token names its sale and no update; an update's token names the same sale and that update", () =>
    run(Effect.gen(function*() {
      const { sale, token, listing } = yield* sold()
      const own = yield* receipted(token)
      expect(own.sale).toStrictEqual(sale)
      expect(own.update).toBeNull()
      yield* push(NEW_SHA)
      const goods = yield* deliverLatest(sale, listing)
      const update = goods.update!
      const byUpdate = yield* receipted(tokenOf(goods.receipt))
      expect(byUpdate.sale).toStrictEqual(sale)
      expect(byUpdate.update).toStrictEqual(update)
    })))

  it.effect("a token that does not verify, a well-signed one naming no sale or no delivery, and a sale not settled are all 'No such download.'", () =>
    run(Effect.gen(function*() {
      const box = yield* SecretBox
      const noSuch = { _tag: "NotFound", detail: "No such download." }
      const { token, listing, checkout } = yield* sold()
      expect(brief(yield* failureOf(receipted(`${token}x`)))).toStrictEqual(noSuch)
      expect(brief(yield* failureOf(receipted(receiptToken("sale_nobody" as SaleId, box.mac))))).toStrictEqual(noSuch)
      expect(brief(yield* failureOf(receipted(receiptToken("dlv_nobody" as DeliveryId, box.mac))))).toStrictEqual(noSuch)
      const ledger = yield* SaleLedger
      // Pending (even one carrying a settlement time), failed, and "settled" without a settlement time.
      const pending = aSale({ listingId: listing.id, checkoutId: checkout.id, status: "pending", settledAt: NOW, transaction: "0xt" })
      const failed = aSale({ listingId: listing.id, checkoutId: checkout.id })
      const timeless = aSale({ listingId: listing.id, checkoutId: checkout.id })
      for (const s of [pending, failed, timeless]) yield* ledger.recordPending(s)
      yield* ledger.markFailed(failed.id, "transaction_failed")
      yield* ledger.settle(new Sale({ ...timeless, status: "settled", transaction: "0xt", settledAt: null }), Option.none())
      for (const s of [pending, failed, timeless]) {
        expect(brief(yield* failureOf(receipted(receiptToken(s.id, box.mac)))), s.id).toStrictEqual(noSuch)
      }
    })))
})

describe("Purchases.updateEligible: whether a sale may have the listing's current commit", () => {
  it.effect("a purchase sold without updates is refused (updates_not_included), naming the commit paid for and its receipt link", () =>
    run(Effect.gen(function*() {
      const { sale } = yield* sold({ updatesDays: 0 })
      const receipt = yield* linkOf(sale.id)
      expect(brief(yield* failureOf(eligible(sale)))).toStrictEqual({
        _tag: "UpdateRefused",
        reason: "updates_not_included",
        receipt,
        detail: `This purchase came with no updates: the listing offered none when it was paid for. ${keeps(receipt)}`
      })
    })))

  it.effect("a sale recorded without a pinned commit names it 'unknown'", () =>
    run(Effect.gen(function*() {
      const { sale } = yield* sold({ updatesDays: 0, commitSha: null })
      const receipt = yield* linkOf(sale.id)
      const refused = yield* failureOf(eligible(sale))
      expect(refused).toMatchObject({ reason: "updates_not_included", detail: expect.stringContaining(keeps(receipt, "unknown")) })
    })))

  it.effect("the window is open up to its last millisecond (settlement + updatesDays days) and closed 1 ms later (updates_window_closed, saying when it ended)", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold({ settledAt: new Date(NOW.getTime() - 30 * DAY_MS) })
      expect((yield* eligible(sale)).id).toBe(listing.id)
      yield* TestClock.adjust(1)
      const receipt = yield* linkOf(sale.id)
      expect(brief(yield* failureOf(eligible(sale)))).toStrictEqual({
        _tag: "UpdateRefused",
        reason: "updates_window_closed",
        receipt,
        detail: `This purchase's updates ended at 2024-03-01T12:00:00.000Z (30 days after payment); newer commits are not part of it. ${keeps(receipt)}`
      })
    })))

  it.effect("a 1-day window ends one day after settlement", () =>
    run(Effect.gen(function*() {
      const { sale } = yield* sold({ updatesDays: 1, settledAt: new Date(NOW.getTime() - DAY_MS + 1) })
      yield* eligible(sale)
      yield* TestClock.adjust(1)
      yield* eligible(sale)
      yield* TestClock.adjust(1)
      expect(brief(yield* failureOf(eligible(sale)))).toMatchObject({ reason: "updates_window_closed", detail: expect.stringContaining("ended at 2024-03-01T12:00:00.001Z (1 day after payment)") })
    })))

  it.effect("a listing taken down (or gone) gives no newer commits (listing_taken_down), within the window", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold()
      yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...listing, status: "taken_down", takenDownAt: NOW })))
      const receipt = yield* linkOf(sale.id)
      expect(brief(yield* failureOf(eligible(sale)))).toStrictEqual({
        _tag: "UpdateRefused",
        reason: "listing_taken_down",
        receipt,
        detail: `The seller took this listing down, so it gives no newer commits. ${keeps(receipt)}`
      })
      const orphan = new Sale({ ...sale, listingId: "lst_gone" as Sale["listingId"] })
      expect(yield* failureOf(eligible(orphan))).toMatchObject({ _tag: "UpdateRefused", reason: "listing_taken_down" })
    })))

  it.effect("the reasons come in order: no updates, then the window, then the listing", () =>
    run(Effect.gen(function*() {
      const none = yield* sold({ updatesDays: 0, settledAt: new Date(NOW.getTime() - 400 * DAY_MS) })
      yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...none.listing, status: "taken_down", takenDownAt: NOW })))
      expect(yield* failureOf(eligible(none.sale))).toMatchObject({ reason: "updates_not_included" })
      const closed = new Sale({ ...none.sale, updatesDays: 30 })
      expect(yield* failureOf(eligible(closed))).toMatchObject({ reason: "updates_window_closed" })
      const open = new Sale({ ...closed, settledAt: NOW })
      expect(yield* failureOf(eligible(open))).toMatchObject({ reason: "listing_taken_down" })
    })))

  it.effect("reads the ledger's copy and the listing only: the code host is not asked and nothing is recorded", () =>
    run(Effect.gen(function*() {
      const { sale } = yield* sold()
      yield* push(NEW_SHA)
      const control = yield* CodeHostMemoryControl
      const before = yield* control.calls
      yield* eligible(sale)
      expect(yield* control.calls).toBe(before)
      expect(yield* deliveries(sale)).toEqual([])
    })))
})

describe("Purchases.deliverLatest: the listing's current commit", () => {
  it.effect("while the head has not moved, the purchase's own goods: its commit, its receipt link, no delivery recorded", () =>
    run(Effect.gen(function*() {
      const { sale, listing, token } = yield* sold()
      const goods = yield* deliverLatest(sale, listing)
      expect(goods.update).toBeNull()
      expect(goods.sale).toStrictEqual(sale)
      expect(goods.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
      expect(goods.receipt).toBe(`${BASE_URL}/downloads/${token}`)
      expect(claimsOf(goods.signedReceipt)).not.toHaveProperty("delivery")
      expect(yield* deliveries(sale)).toEqual([])
    })))

  it.effect("commit ids compare case-insensitively: a head in capitals, or a sale's commit in capitals, is the same commit", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold()
      yield* push(SHA.toUpperCase())
      expect((yield* deliverLatest(sale, listing)).update).toBeNull()
      expect(yield* deliveries(sale)).toEqual([])
      yield* push(SHA)
      const upper = new Sale({ ...sale, commitSha: SHA.toUpperCase() })
      expect((yield* deliverLatest(upper, listing)).update).toBeNull()
      expect(yield* deliveries(sale)).toEqual([])
    })))

  it.effect("after a push, an update delivery of the head recorded now (commit = head, deliveredAt = now), with its own goods and receipt link", () =>
    run(Effect.gen(function*() {
      const { sale, listing, token } = yield* sold({ settledAt: new Date(NOW.getTime() - 2 * DAY_MS) })
      yield* push(NEW_SHA)
      yield* TestClock.adjust(3 * 60 * 60 * 1000)
      const at = new Date(NOW.getTime() + 3 * 60 * 60 * 1000)
      const goods = yield* deliverLatest(sale, listing)
      const update = goods.update!
      expect(update.id).toMatch(/^dlv_/)
      expect({ saleId: update.saleId, commitSha: update.commitSha, deliveredAt: update.deliveredAt }).toStrictEqual({ saleId: sale.id, commitSha: NEW_SHA, deliveredAt: at })
      expect(yield* deliveries(sale)).toStrictEqual([update])
      expect(goods.sale).toStrictEqual(sale)
      expect(goods.settlement).toStrictEqual({ success: true, transaction: "0xsettled", network: TEST_NETWORK, payer: sale.payer, errorReason: null })
      expect(goods.filename).toBe(`Octo-Org-Widget-${NEW_SHA.slice(0, 7)}.tar.gz`)
      expect(goods.receipt).toBe(yield* linkOf(update.id))
      expect(goods.receipt).not.toBe(`${BASE_URL}/downloads/${token}`)
      // The test twin's manifest names the update's commit, and the tree as pushed.
      const text = yield* textOf(goods)
      expect(text).toContain(`"commit": "${NEW_SHA}"`)
      expect(text).toContain(`at commit ${NEW_SHA} for`)
      expect(text).toContain("CHANGELOG.md")
      expect(text).not.toContain(SHA)
      // Its signed receipt: the same payment, the update's commit, time and id, and when the window closes.
      expect(claimsOf(goods.signedReceipt)).toMatchObject({
        sale: sale.id,
        transaction: "0xsettled",
        payer: sale.payer,
        commit: NEW_SHA,
        delivery: update.id,
        deliveredAt: unixSeconds(at),
        issuedAt: unixSeconds(at),
        updatesUntil: unixSeconds(new Date(NOW.getTime() + 28 * DAY_MS)),
        archive: goods.digest
      })
      expect(goods.digest).not.toBeNull()
    })))

  it.effect("asked again for the same head, answers the same delivery (same id, time and link), recording nothing new; a newer push is a second delivery", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold()
      yield* push(NEW_SHA)
      const first = yield* deliverLatest(sale, listing)
      yield* TestClock.adjust(DAY_MS)
      const again = yield* deliverLatest(sale, listing)
      expect(again.update).toStrictEqual(first.update)
      expect(again.receipt).toBe(first.receipt)
      expect(claimsOf(again.signedReceipt).deliveredAt).toBe(unixSeconds(NOW))
      expect(yield* deliveries(sale)).toHaveLength(1)
      const NEWER = "0000000000000000000000000000000000000abc"
      yield* push(NEWER)
      const newer = yield* deliverLatest(sale, listing)
      expect(newer.update!.commitSha).toBe(NEWER)
      expect(newer.update!.id).not.toBe(first.update!.id)
      expect((yield* deliveries(sale)).map((d) => d.commitSha)).toStrictEqual([NEW_SHA, NEWER])
    })))

  it.effect("a sale recorded without a pinned commit gets the head as an update", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold({ commitSha: null })
      const goods = yield* deliverLatest(sale, listing)
      expect(goods.update).toMatchObject({ commitSha: SHA, saleId: sale.id })
      expect(goods.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
    })))

  it.effect("a code host that cannot say is HostUnavailable (503), with nothing recorded", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold()
      yield* push(NEW_SHA)
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.setDown("unavailable"))
      expect(brief(yield* failureOf(deliverLatest(sale, listing)))).toStrictEqual({
        _tag: "HostUnavailable",
        retryAfterSeconds: null,
        detail: "The code host did not answer; try again later."
      })
      expect(yield* deliveries(sale)).toEqual([])
    })))

  it.effect("a live sale's update is the update commit's archive, cut before it goes out: its digest and its receipt name those bytes", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold({ livemode: true })
      // The purchased commit's archive is cut first, so its digest is known and must not be the update's.
      const own = yield* deliverLatest(sale, listing)
      yield* bytesOf(own.body)
      yield* push(NEW_SHA)
      const host = yield* CodeHost
      expect(yield* host.archiveDigest(WIDGET_REF, NEW_SHA)).toStrictEqual(Option.none())
      const goods = yield* deliverLatest(sale, listing)
      expect(goods.filename).toBe(`Octo-Org-Widget-${NEW_SHA.slice(0, 7)}.tar.gz`)
      const cut = Option.getOrThrow(yield* host.archiveDigest(WIDGET_REF, NEW_SHA))
      expect(goods.digest).toStrictEqual(cut)
      expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: NEW_SHA, archive: cut, delivery: goods.update!.id, livemode: true })
      const bytes = yield* bytesOf(goods.body)
      expect(bytes.toString("utf8")).toContain(`${NEW_SHA.slice(0, 7)} CHANGELOG.md`)
      expect({ sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length }).toStrictEqual(cut)
      const again = yield* download(tokenOf(goods.receipt))
      expect(again.digest).toStrictEqual(cut)
      expect(claimsOf(again.signedReceipt)).toMatchObject({ commit: NEW_SHA, archive: cut, delivery: goods.update!.id })
      expect(cut).not.toStrictEqual(Option.getOrThrow(yield* host.archiveDigest(WIDGET_REF, SHA)))
    })))
})

describe("an update's test goods and provenance", () => {
  it.effect("the test twin's manifest lists the tree of the update's commit (the code host is asked for that commit's tree)", () => {
    const trees: Array<string> = []
    const recording = (host: CodeHost["Type"]): CodeHost["Type"] => ({
      ...host,
      tree: (repo, token) => Effect.suspend(() => (trees.push(repo.headSha), host.tree(repo, token)))
    })
    return run(
      Effect.gen(function*() {
        const { sale, listing, token } = yield* sold()
        yield* push(NEW_SHA)
        trees.length = 0
        expect((yield* download(token)).update).toBeNull()
        expect(trees).toStrictEqual([SHA])
        trees.length = 0
        yield* deliverLatest(sale, listing)
        expect(trees).toStrictEqual([NEW_SHA])
      }),
      { wrapHost: recording }
    )
  })

  it.effect("an update's provenance attests the update's archive: its commit, its delivery time and its id, for the same sale", () =>
    run(Effect.gen(function*() {
      const { sale, listing } = yield* sold()
      yield* push(NEW_SHA)
      yield* TestClock.adjust(60_000)
      const goods = yield* deliverLatest(sale, listing)
      const envelope = yield* Effect.flatMap(Purchases, (p) => p.provenance(tokenOf(goods.receipt), CLIENT))
      const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
      expect(statement.subject).toStrictEqual([{ name: goods.filename, digest: { sha256: goods.digest!.sha256 } }])
      expect(statement.predicate).toMatchObject({
        commit: NEW_SHA,
        sale: sale.id,
        delivery: goods.update!.id,
        deliveredAt: new Date(NOW.getTime() + 60_000).toISOString()
      })
    })))
})

describe("Purchases.download by an update's receipt link", () => {
  it.effect("gives the update's commit again, with the update's receipt; the purchase's own link still gives the commit paid for", () =>
    run(Effect.gen(function*() {
      const { sale, listing, token } = yield* sold()
      yield* push(NEW_SHA)
      const delivered = yield* deliverLatest(sale, listing)
      const again = yield* download(tokenOf(delivered.receipt))
      expect(again.update).toStrictEqual(delivered.update)
      expect(again.filename).toBe(`Octo-Org-Widget-${NEW_SHA.slice(0, 7)}.tar.gz`)
      expect(again.receipt).toBe(delivered.receipt)
      expect(claimsOf(again.signedReceipt)).toMatchObject({ commit: NEW_SHA, delivery: delivered.update!.id })
      expect(yield* textOf(again)).toContain(`"commit": "${NEW_SHA}"`)
      const own = yield* download(token)
      expect(own.update).toBeNull()
      expect(own.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
      expect(claimsOf(own.signedReceipt)).toMatchObject({ commit: SHA, deliveredAt: unixSeconds(NOW), updatesUntil: unixSeconds(new Date(NOW.getTime() + 30 * DAY_MS)) })
      expect(claimsOf(own.signedReceipt)).not.toHaveProperty("delivery")
    })))

  it.effect("an update's link lasts 7 days from its delivery to the millisecond (not from settlement), then ReceiptExpired naming the repo page", () =>
    run(Effect.gen(function*() {
      const { sale, listing, token } = yield* sold({ settledAt: new Date(NOW.getTime() - 6 * DAY_MS) })
      yield* push(NEW_SHA)
      const { receipt } = yield* deliverLatest(sale, listing)
      yield* TestClock.adjust(RECEIPT_TTL_MS)
      expect((yield* download(tokenOf(receipt))).update?.commitSha).toBe(NEW_SHA)
      // The purchase's own link counts from settlement: long expired by now.
      expect(brief(yield* failureOf(download(token)))).toMatchObject({ _tag: "ReceiptExpired", detail: "This download link has expired (links last 7 days after payment)." })
      yield* TestClock.adjust(1)
      expect(brief(yield* failureOf(download(tokenOf(receipt))))).toStrictEqual({
        _tag: "ReceiptExpired",
        page: PAGE,
        detail: "This update's download link has expired (an update's link lasts 7 days after it was delivered); ask for the latest commit again with the purchase's receipt link + /latest while its update window is open."
      })
    })))
})

/** A copy of the payment carrying the buyer's x402 payment-identifier id. */
const withId = (payment: SubmittedPayment, id = `pay_${unique()}0123456789abcdef`): SubmittedPayment => ({ ...payment, paymentId: Redacted.make(id) })

/** The widget listed with `updatesDays` and bought in test mode by a new buyer with a payment-identifier id. */
const bought = (updatesDays = 30) =>
  Effect.gen(function*() {
    const { listing, checkout } = yield* listedWidget(updatesDays)
    const purchases = yield* Purchases
    const quote = yield* purchases.quote(checkout.id, false)
    const requirement = quote.requirements.find((r) => r.chain === "base")!
    const payment = withId(yield* signedPayment(privateKeyToAccount(generatePrivateKey()), requirement, NOW))
    return { listing, checkout, payment }
  })
const pay = (checkout: Checkout, payment: SubmittedPayment, latest?: boolean) =>
  Effect.flatMap(Purchases, (p) => latest === undefined ? p.pay(checkout.id, false, payment, CLIENT) : p.pay(checkout.id, false, payment, CLIENT, latest))

/** The payment echoing `offers` in its `offer-receipt` extension, as an official x402 v2 client sends a 402's offers back. */
const echoing = (payment: SubmittedPayment, offers: ReadonlyArray<string>): SubmittedPayment => ({ ...payment, raw: { extensions: offersExtension(offers) } })

describe("Purchases.pay: the update window its echoed offer names", () => {
  it.effect("the window offered is the window bought; a window changed since the 402 refuses the payment (offer_mismatch naming both) before any facilitator call, nothing recorded", () => {
    const calls = { verify: 0 }
    return run(
      Effect.gen(function*() {
        const { checkout, listing } = yield* listedWidget(14)
        const quote = yield* Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false))
        const requirement = quote.requirements.find((r) => r.chain === "base")!
        const payment = echoing(yield* signedPayment(privateKeyToAccount(generatePrivateKey()), requirement, NOW), quote.offers)
        yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...listing, updatesDays: 3 })))
        const refused = brief(yield* failureOf(pay(checkout, payment)))
        expect(refused).toStrictEqual({
          _tag: "PaymentRejected",
          reason: "offer_mismatch",
          detail: "The offer this payment was made against includes 14 days of updates after purchase, but the listing now offers 3: the seller changed it since, or the offer was altered. Nothing was charged. Pay one of this 402's offers to buy on the current terms."
        })
        expect(calls.verify).toBe(0)
        expect((yield* Effect.flatMap(SaleLedger, (l) => l.findByPaymentId(payment.network, "x", "y")))._tag).toBe("None")
        // The same offer again once the listing offers what it named: bought, with that window.
        yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...listing, updatesDays: 14 })))
        const goods = yield* pay(checkout, payment)
        expect(goods.sale.updatesDays).toBe(14)
        expect(calls.verify).toBe(1)
      }),
      { facilitator: { verify: () => Effect.sync(() => (calls.verify++, { valid: true, invalidReason: null, payer: null })) } }
    )
  })

  it.effect("an echoed offer that names no window (signed before windows existed) buys the listing's window now", () =>
    run(Effect.gen(function*() {
      const { checkout } = yield* listedWidget(7)
      const quote = yield* Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false))
      const requirement = quote.requirements.find((r) => r.chain === "base")!
      const [header, body, signature] = quote.offers[0]!.split(".") as [string, string, string]
      const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
      delete claims.updatesDays
      const older = `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`
      const payment = echoing(yield* signedPayment(privateKeyToAccount(generatePrivateKey()), requirement, NOW), [older])
      expect((yield* pay(checkout, payment)).sale.updatesDays).toBe(7)
    })))
})

/**
 * A buyer's retry with latest whose id lookup misses once (the ledger then finds the sale by its payment key) or,
 * with `byKey`, whose payment-key lookup misses too (its record then answers the sale the other copy recorded):
 * the update either way, and the commit paid for without latest.
 */
const racedRetry = (byKey: boolean) => {
  let misses = 0
  const miss = <A>(lookup: () => Effect.Effect<Option.Option<A>, any>) =>
    Effect.suspend(() => misses > 0 ? (misses--, Effect.succeedNone) : lookup())
  const wrap = (ledger: Ledger): Ledger => ({
    ...ledger,
    findByPaymentId: (network, payer, digest) =>
      byKey && misses > 0 ? Effect.succeedNone : miss(() => ledger.findByPaymentId(network, payer, digest)),
    findByPaymentKey: (key) => byKey ? miss(() => ledger.findByPaymentKey(key)) : ledger.findByPaymentKey(key)
  })
  return run(
    Effect.gen(function*() {
      const { checkout, payment } = yield* bought()
      const first = yield* pay(checkout, payment)
      yield* push(NEW_SHA)
      misses = 1
      const update = yield* pay(checkout, payment, true)
      expect(misses).toBe(0)
      expect(update.update).toMatchObject({ saleId: first.sale.id, commitSha: NEW_SHA })
      misses = 1
      const paidFor = yield* pay(checkout, payment, false)
      expect(paidFor.update).toBeNull()
      expect(paidFor.receipt).toBe(first.receipt)
    }),
    // Past both lookups the payment is verified again: a stub facilitator, not the simulated one that knows its nonce.
    byKey ? { wrap, facilitator: {} } : { wrap }
  )
}

describe("Purchases.pay: the buyer's retry with its id asking for the latest commit", () => {
  it.effect("a purchase records the listing's update window on its sale; a later change to the listing's leaves it", () =>
    run(Effect.gen(function*() {
      const { listing, checkout, payment } = yield* bought(30)
      const goods = yield* pay(checkout, payment)
      expect(goods.sale.updatesDays).toBe(30)
      expect(Option.getOrThrow(yield* Effect.flatMap(SaleLedger, (l) => l.findById(goods.sale.id))).updatesDays).toBe(30)
      yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...listing, updatesDays: 0 })))
      yield* push(NEW_SHA)
      expect((yield* pay(checkout, payment, true)).update?.commitSha).toBe(NEW_SHA)
    })))

  it.effect("with latest, the update after a push (the same delivery asked twice); without it (or latest false), the commit paid for", () =>
    run(Effect.gen(function*() {
      const { checkout, payment } = yield* bought()
      const first = yield* pay(checkout, payment)
      expect(first.update).toBeNull()
      yield* push(NEW_SHA)
      const update = yield* pay(checkout, payment, true)
      expect(update.sale.id).toBe(first.sale.id)
      expect(update.update).toMatchObject({ saleId: first.sale.id, commitSha: NEW_SHA, deliveredAt: NOW })
      expect(update.filename).toBe(`Octo-Org-Widget-${NEW_SHA.slice(0, 7)}.tar.gz`)
      expect(update.receipt).toBe(yield* linkOf(update.update!.id))
      expect((yield* pay(checkout, payment, true)).update).toStrictEqual(update.update)
      for (const again of [yield* pay(checkout, payment), yield* pay(checkout, payment, false)]) {
        expect(again.update).toBeNull()
        expect(again.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
        expect(again.receipt).toBe(first.receipt)
      }
      expect(yield* deliveries(first.sale)).toHaveLength(1)
    })))

  it.effect("with latest while the head has not moved, the purchase's own goods and nothing recorded", () =>
    run(Effect.gen(function*() {
      const { checkout, payment } = yield* bought()
      const first = yield* pay(checkout, payment)
      const again = yield* pay(checkout, payment, true)
      expect(again.update).toBeNull()
      expect(again.receipt).toBe(first.receipt)
      expect(yield* deliveries(first.sale)).toEqual([])
    })))

  it.effect("with latest past the window (or for a purchase sold without updates, or at a listing taken down) the refusal; without it the commit paid for", () =>
    run(Effect.gen(function*() {
      const none = yield* bought(0)
      const noUpdates = yield* pay(none.checkout, none.payment)
      yield* push(NEW_SHA)
      expect(yield* failureOf(pay(none.checkout, none.payment, true))).toMatchObject({ _tag: "UpdateRefused", reason: "updates_not_included", receipt: noUpdates.receipt })
      yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...none.listing, status: "taken_down", takenDownAt: NOW })))
      yield* push(SHA)
      const { checkout, payment, listing } = yield* bought(30)
      const paid = yield* pay(checkout, payment)
      yield* push(NEW_SHA)
      yield* TestClock.adjust(30 * DAY_MS + 1)
      expect(yield* failureOf(pay(checkout, payment, true))).toMatchObject({ _tag: "UpdateRefused", reason: "updates_window_closed", receipt: paid.receipt })
      expect((yield* pay(checkout, payment)).filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
      yield* TestClock.setTime(NOW.getTime())
      yield* Effect.flatMap(ListingStore, (s) => s.update(aListing({ ...listing, status: "taken_down", takenDownAt: NOW })))
      expect(yield* failureOf(pay(checkout, payment, true))).toMatchObject({ _tag: "UpdateRefused", reason: "listing_taken_down" })
      expect((yield* pay(checkout, payment)).update).toBeNull()
    })))

  it.effect("a retry with latest that raced past the id lookup (found by its payment key) gets the update too", () => racedRetry(false))

  it.effect("a retry with latest that raced past both lookups (its sale recorded by the other copy first) gets the update too", () => racedRetry(true))

  it.effect("a retry with latest of a sale still pending is 503 settlement pending, as without", () =>
    run(
      Effect.gen(function*() {
        const { checkout, payment } = yield* bought()
        expect(yield* failureOf(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending" })
        const answers: Array<unknown> = []
        for (const latest of [true, false]) {
          const fiber = yield* Effect.fork(failureOf(pay(checkout, payment, latest)))
          yield* TestClock.adjust("10 seconds")
          answers.push(brief(yield* Fiber.join(fiber)))
        }
        expect(answers[0]).toMatchObject({ _tag: "SettlementPending" })
        expect(answers[0]).toStrictEqual(answers[1])
      }),
      { facilitator: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "no answer" })) } }
    ))

  it.effect("a retry of a pending sale whose ledger cannot be read: the StorageError reaches the caller at once, neither waited on nor taken for still pending", () => {
    // The next read fails, once: a retry that took the failure for "still pending" would read again, and succeed.
    let failing = 0
    const flaky = (ledger: Ledger): Ledger => ({
      ...ledger,
      findById: (id) =>
        Effect.suspend(() => failing > 0 ? (failing--, Effect.fail(new StorageError({ unavailable: true, message: "the database did not answer" }))) : ledger.findById(id))
    })
    return run(
      Effect.gen(function*() {
        const { checkout, payment } = yield* bought()
        expect(brief(yield* failureOf(pay(checkout, payment)))).toMatchObject({ _tag: "SettlementPending" })
        for (const latest of [false, true]) {
          failing = 1
          expect(brief(yield* failureOf(pay(checkout, payment, latest)))).toMatchObject({ _tag: "StorageError", unavailable: true })
        }
      }),
      { wrap: flaky, facilitator: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "no answer" })) } }
    )
  })

  it.effect("a retry with latest of a sale that failed is its failure again, as without", () =>
    run(
      Effect.gen(function*() {
        const { checkout, payment } = yield* bought()
        yield* failureOf(pay(checkout, payment))
        const withLatest = brief(yield* failureOf(pay(checkout, payment, true)))
        expect(withLatest).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
        expect(withLatest).toStrictEqual(brief(yield* failureOf(pay(checkout, payment))))
      }),
      {
        facilitator: {
          settle: (_, r) => Effect.succeed({ success: false, transaction: null, network: r.network, payer: null, errorReason: "insufficient_funds" }),
          status: () => Effect.succeed({ _tag: "Unsettled" })
        }
      }
    ))
})

/** The listing's current commit by a receipt link, its slot released at once. */
const latestByReceipt = (token: string, client = CLIENT) => Effect.scoped(Effect.flatMap(Redownloads, (r) => r.latestByReceipt(token, client)))
const byReceipt = (token: string, client = CLIENT) => Effect.scoped(Effect.flatMap(Redownloads, (r) => r.byReceipt(token, client)))
const times = <A, E, R>(n: number, effect: Effect.Effect<A, E, R>) => Effect.forEach(Array.from({ length: n }), () => effect)
/** A wallet's answer to a fresh challenge of `checkout` (the trusting proof above takes it at its word). */
const proofOf = (checkout: Checkout, address: string) =>
  Effect.gen(function*() {
    const challenge = Option.getOrThrow(yield* Effect.flatMap(Redownloads, (r) => r.challengeFor(checkout.id, false)))
    return JSON.stringify({
      address,
      network: challenge.networks[0]!.network,
      nonce: challenge.nonce,
      issuedAt: challenge.issuedAt.toISOString(),
      expiresAt: challenge.expiresAt.toISOString()
    })
  })
const redeem = (checkout: Checkout, proof: string, latest?: boolean) =>
  Effect.scoped(Effect.flatMap(Redownloads, (r) =>
    latest === undefined ? r.redeem(checkout.id, false, proof, CLIENT) : r.redeem(checkout.id, false, proof, CLIENT, latest)))

describe("Redownloads: the latest commit by a receipt link or a wallet", () => {
  it.effect("by the purchase's link, or by an update's own link, the update of the head", () =>
    run(Effect.gen(function*() {
      const { sale, token } = yield* sold()
      expect((yield* latestByReceipt(token)).update).toBeNull()
      yield* push(NEW_SHA)
      const update = yield* latestByReceipt(token)
      expect(update.update).toMatchObject({ saleId: sale.id, commitSha: NEW_SHA })
      expect((yield* latestByReceipt(tokenOf(update.receipt))).update).toStrictEqual(update.update)
      expect(brief(yield* failureOf(latestByReceipt(`${token}0`)))).toStrictEqual({ _tag: "NotFound", detail: "No such download." })
    })))

  it.effect("a refusal spends no re-download budget: refused past the hourly limit, and the receipt still re-downloads its full budget after", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold({ updatesDays: 0 })
      const refusals = yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR + 2, Effect.map(failureOf(latestByReceipt(token)), brief))
      for (const refusal of refusals) expect(refusal).toMatchObject({ _tag: "UpdateRefused", reason: "updates_not_included" })
      yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, byReceipt(token))
      expect(yield* failureOf(byReceipt(token))).toMatchObject({ _tag: "RateLimited" })
    })))

  it.effect("updates share the sale's hourly budget with its re-downloads", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      yield* push(NEW_SHA)
      const half = REDOWNLOADS_PER_RECEIPT_PER_HOUR / 2
      yield* times(half, byReceipt(token))
      const update = yield* latestByReceipt(token)
      yield* times(half - 1, latestByReceipt(tokenOf(update.receipt), "198.51.100.7"))
      expect(yield* failureOf(latestByReceipt(token, "198.51.100.8"))).toMatchObject({ _tag: "RateLimited" })
      expect(yield* failureOf(byReceipt(token, "198.51.100.9"))).toMatchObject({ _tag: "RateLimited" })
    })))

  it.effect("a wallet's proof with latest gets the update; without it (or latest false), the commit paid for; past the window, the refusal", () =>
    run(Effect.gen(function*() {
      const { sale, checkout } = yield* sold()
      yield* push(NEW_SHA)
      const update = yield* redeem(checkout, yield* proofOf(checkout, sale.payer), true)
      expect(update.update).toMatchObject({ saleId: sale.id, commitSha: NEW_SHA })
      for (const plain of [yield* redeem(checkout, yield* proofOf(checkout, sale.payer)), yield* redeem(checkout, yield* proofOf(checkout, sale.payer), false)]) {
        expect(plain.update).toBeNull()
        expect(plain.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
      }
      yield* TestClock.adjust(30 * DAY_MS + 1)
      expect(yield* failureOf(redeem(checkout, yield* proofOf(checkout, sale.payer), true))).toMatchObject({ _tag: "UpdateRefused", reason: "updates_window_closed" })
    })))
})

describe("spans", () => {
  it.effect("an update by receipt runs in spans named Redownloads.latestByReceipt, Redownloads.latest, Purchases.receipted, Purchases.updateEligible and Purchases.deliverLatest", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      yield* push(NEW_SHA)
      const names: Array<string> = []
      const tracer = yield* Effect.tracer
      const recording = Tracer.make({ ...tracer, span: (name, ...rest) => (names.push(name), tracer.span(name, ...rest)) })
      yield* latestByReceipt(token).pipe(Effect.withTracer(recording))
      for (const name of ["Redownloads.latestByReceipt", "Redownloads.latest", "Purchases.receipted", "Purchases.updateEligible", "Purchases.deliverLatest"]) {
        expect(names).toContain(name)
      }
    })))
})

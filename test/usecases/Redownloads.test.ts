/*
 * Redownloads on memory adapters (issue 28): receipt re-downloads admitted or refused by the use case over
 * memory storage, the in-memory rate limiter and the TestClock; settled sales seeded in the memory ledger, and
 * one bought for real in test mode (an EIP-3009 authorization signed with viem, settled by the simulated
 * facilitator memoryPorts carries). Beside test/adapters/github/ReceiptRedownloadsHttp.test.ts and
 * test/http/purchase-receipt.test.ts: the limits per receipt, per client and at once per receipt, 429-type
 * refusals past them, expired and forged receipts, and a purchase (the first download) never refused by them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Scope, TestClock, Tracer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { RepoRef } from "../../domain/Ids.js"
import { RECEIPT_TTL_MS, receiptToken } from "../../domain/rules/Receipt.js"
import { Sale } from "../../domain/Sale.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import {
  CONCURRENT_DOWNLOADS_PER_RECEIPT,
  CONCURRENT_RETRY_AFTER_SECONDS,
  REDOWNLOADS_PER_CLIENT_PER_HOUR,
  REDOWNLOADS_PER_RECEIPT_PER_HOUR,
  Redownloads
} from "../../domain/usecases/Redownloads.js"
import { ListingStore } from "../../ports/ListingStore.js"
import type { PaymentRequirement } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { aCheckout, aListing, aSale, unique } from "../../testing/Fixtures.js"
import { atNow, BASE_URL, brief, failureOf, memoryApp, NOW, SHA, WIDGET } from "./memoryApp.js"
import { signedPayment } from "./support.js"

const CLIENT = "203.0.113.20"
const HOUR_MS = 60 * 60 * 1000

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(Effect.zipRight(atNow, effect), memoryApp()) as Effect.Effect<A, E>

/**
 * A listing (Base payout, 12.34) with its current checkout, stored: of the memory host's widget, or by default
 * of a repo of its own (one live listing per repo).
 */
const listed = (repo: RepoRef = new RepoRef({ owner: `Owner-${unique()}`, name: "Widget" })) => Effect.gen(function*() {
  const store = yield* ListingStore
  const listing = aListing({ repo, hostPat: null })
  const checkout = aCheckout(listing)
  yield* store.insert(listing)
  yield* store.insertCheckout(checkout)
  return { listing, checkout }
})

/** A sale of the listed widget in the ledger, settled at `settledAt` unless `status` says otherwise; its receipt token. */
const soldAt = (settledAt: Date, status: "settled" | "pending" | "failed" = "settled") =>
  Effect.gen(function*() {
    const { checkout, listing } = yield* listed()
    const ledger = yield* SaleLedger
    const sale = aSale({ listingId: listing.id, checkoutId: checkout.id, accountId: null, repo: "Octo-Org/Widget", livemode: false, commitSha: SHA, createdAt: settledAt })
    yield* ledger.recordPending(sale)
    if (status === "settled") yield* ledger.settle(new Sale({ ...sale, status: "settled", transaction: "0xsettled", settledAt }), Option.none())
    if (status === "failed") yield* ledger.markFailed(sale.id, "transaction_failed")
    const box = yield* SecretBox
    return { sale, token: receiptToken(sale.id, box.mac) }
  })
const sold = soldAt(NOW)

/** One re-download by receipt, its slot released at once (the response sent). */
const redownload = (token: string, client = CLIENT) => Effect.scoped(Effect.flatMap(Redownloads, (r) => r.byReceipt(token, client)))
/** Whether a re-download was admitted; a refusal must be RateLimited with a retry time. */
const admitted = (token: string, client = CLIENT) =>
  Effect.map(Effect.exit(redownload(token, client)), (exit) => {
    if (Exit.isSuccess(exit)) return true
    const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    expect(brief(error)).toMatchObject({ _tag: "RateLimited" })
    expect((error as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0)
    return false
  })
const times = <A, E, R>(n: number, effect: Effect.Effect<A, E, R>) => Effect.forEach(Array.from({ length: n }), () => effect)

describe("Redownloads.byReceipt: hourly limits", () => {
  it.effect(`one receipt re-downloads ${REDOWNLOADS_PER_RECEIPT_PER_HOUR} times an hour, then RateLimited with Retry-After, from any client; an hour later it downloads again`, () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold
      const answers = yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR + 5, admitted(token))
      expect(answers).toEqual([...Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(true), ...Array(5).fill(false)])
      // A shared receipt is not a free mirror: another address is refused too.
      expect(yield* admitted(token, "198.51.100.1")).toBe(false)
      yield* TestClock.adjust(HOUR_MS)
      expect(yield* admitted(token, "198.51.100.1")).toBe(true)
    })))

  it.effect(`one client re-downloads ${REDOWNLOADS_PER_CLIENT_PER_HOUR} times an hour over all its receipts: a fresh receipt is then refused for it, and still downloads for another client`, () =>
    run(Effect.gen(function*() {
      for (let r = 0; r < REDOWNLOADS_PER_CLIENT_PER_HOUR / REDOWNLOADS_PER_RECEIPT_PER_HOUR; r++) {
        const { token } = yield* sold
        expect(yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, admitted(token))).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(true))
      }
      const fresh = yield* sold
      expect(yield* admitted(fresh.token)).toBe(false)
      expect(yield* admitted(fresh.token, "198.51.100.2")).toBe(true)
    })))

  it.effect("the goods admitted are the sale's: the commit it paid for, and the receipt link it came with", () =>
    run(Effect.gen(function*() {
      const { sale, token } = yield* sold
      const goods = yield* redownload(token)
      expect(goods.sale.id).toBe(sale.id)
      expect(goods.filename).toBe(`Octo-Org-Widget-${SHA.slice(0, 7)}.tar.gz`)
      expect(goods.receipt).toBe(`${BASE_URL}/downloads/${token}`)
    })))
})

describe("Purchases.download", () => {
  it.effect("a receipt's download runs in a span named Purchases.download (what an operator's tracer shows)", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold
      const names: Array<string> = []
      const tracer = yield* Effect.tracer
      const recording = Tracer.make({ ...tracer, span: (name, ...rest) => (names.push(name), tracer.span(name, ...rest)) })
      yield* Effect.flatMap(Purchases, (p) => p.download(token)).pipe(Effect.withTracer(recording))
      expect(names).toContain("Purchases.download")
    })))
})

describe("Redownloads.byReceipt: downloads at once", () => {
  it.effect(`at most ${CONCURRENT_DOWNLOADS_PER_RECEIPT} downloads of one receipt run at once: a third is RateLimited (Retry-After ${CONCURRENT_RETRY_AFTER_SECONDS}) until one ends; the refusal spends no hourly budget`, () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold
      const other = yield* sold
      const open: Array<Scope.CloseableScope> = []
      for (let i = 0; i < CONCURRENT_DOWNLOADS_PER_RECEIPT; i++) {
        const scope = yield* Scope.make()
        yield* Scope.extend(Effect.flatMap(Redownloads, (r) => r.byReceipt(token, `198.51.100.${10 + i}`)), scope)
        open.push(scope)
      }
      const error = yield* failureOf(redownload(token, "198.51.100.19"))
      expect(brief(error)).toMatchObject({ _tag: "RateLimited", retryAfterSeconds: CONCURRENT_RETRY_AFTER_SECONDS })
      // Another receipt is not held up by this one's running downloads.
      expect(yield* admitted(other.token)).toBe(true)
      yield* Scope.close(open[0]!, Exit.void)
      // The slot is back; and the refused attempt did not count: 2 spent, 8 left this hour.
      const rest = yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR - 1, admitted(token, "198.51.100.20"))
      expect(rest).toEqual([...Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR - CONCURRENT_DOWNLOADS_PER_RECEIPT).fill(true), false])
      yield* Scope.close(open[1]!, Exit.void)
    })))

  it.effect("a re-download refused by an hourly limit does not keep its slot: an hour later two run at once again", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold
      yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, admitted(token))
      expect(yield* times(5, admitted(token))).toEqual(Array(5).fill(false))
      yield* TestClock.adjust(HOUR_MS)
      const scopes = yield* times(CONCURRENT_DOWNLOADS_PER_RECEIPT, Scope.make())
      for (const [i, scope] of scopes.entries()) {
        yield* Scope.extend(Effect.flatMap(Redownloads, (r) => r.byReceipt(token, `198.51.100.${30 + i}`)), scope)
      }
      for (const scope of scopes) yield* Scope.close(scope, Exit.void)
    })))
})

describe("Redownloads.byReceipt: which receipts", () => {
  it.effect("a receipt expires 7 days after settlement: a moment later it is ReceiptExpired (naming the repo's page), a moment before it downloads", () =>
    run(Effect.gen(function*() {
      const old = yield* soldAt(new Date(NOW.getTime() - RECEIPT_TTL_MS - 1))
      const edge = yield* soldAt(new Date(NOW.getTime() - RECEIPT_TTL_MS))
      expect(brief(yield* failureOf(redownload(old.token)))).toMatchObject({ _tag: "ReceiptExpired" })
      expect(yield* admitted(edge.token)).toBe(true)
    })))

  it.effect("forged receipts (another sale's MAC, a changed MAC, no MAC, a sale that does not exist) are NotFound and spend none of the client's budget", () =>
    run(Effect.gen(function*() {
      const a = yield* sold
      const b = yield* sold
      const box = yield* SecretBox
      const mac = a.token.slice(a.token.indexOf(".") + 1)
      const forged = [
        `${b.sale.id}.${mac}`,
        `${a.sale.id}.${mac.slice(0, -1)}${mac.endsWith("0") ? "1" : "0"}`,
        `${a.sale.id}`,
        `${a.sale.id}.`,
        receiptToken("sale_doesNotExist" as Sale["id"], box.mac),
        "x".repeat(300)
      ]
      for (let round = 0; round < 6; round++) {
        for (const token of forged) expect(brief(yield* failureOf(redownload(token)))).toMatchObject({ _tag: "NotFound" })
      }
      expect(yield* admitted(a.token)).toBe(true)
    })))

  it.effect("a pending or failed sale's receipt downloads nothing (NotFound): only a settled payment is goods", () =>
    run(Effect.gen(function*() {
      const pending = yield* soldAt(NOW, "pending")
      const failed = yield* soldAt(NOW, "failed")
      expect(brief(yield* failureOf(redownload(pending.token)))).toMatchObject({ _tag: "NotFound" })
      expect(brief(yield* failureOf(redownload(failed.token)))).toMatchObject({ _tag: "NotFound" })
    })))
})

/** An EIP-3009 authorization for `requirement`, signed by a new buyer with viem, valid 10 minutes from NOW. */
const signed = (requirement: PaymentRequirement) => signedPayment(privateKeyToAccount(generatePrivateKey()), requirement, NOW)

describe("Redownloads: the first download", () => {
  it.effect("a client at its re-download limit is still sold to: the purchase delivers (never refused by the re-download limits), only its receipt's re-download waits for that client", () =>
    run(Effect.gen(function*() {
      // The client spends its hourly re-downloads on receipts it holds.
      for (let r = 0; r < REDOWNLOADS_PER_CLIENT_PER_HOUR / REDOWNLOADS_PER_RECEIPT_PER_HOUR; r++) {
        const { token } = yield* sold
        yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, admitted(token))
      }
      const { checkout } = yield* listed(new RepoRef({ owner: WIDGET.owner, name: WIDGET.name }))
      const purchases = yield* Purchases
      const quote = yield* purchases.quote(checkout.id, false)
      const requirement = quote.requirements.find((r) => r.chain === "base")!
      const goods = yield* purchases.pay(checkout.id, false, yield* signed(requirement), CLIENT)
      expect(goods.sale.status).toBe("settled")
      const token = goods.receipt.slice(`${BASE_URL}/downloads/`.length)
      // The purchase spent none of the receipt's own budget: another address gets all ten...
      expect(yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, admitted(token, "198.51.100.50"))).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(true))
      // ...while the buyer's own address, at its limit, waits for its re-downloads.
      expect(yield* admitted(token)).toBe(false)
    })))
})

describe("Redownloads by wallet (SIWX): refusals before any wallet check", () => {
  it.effect("an unknown checkout has no challenge and redeems nothing (NotFound); a malformed proof is InvalidInput naming the SIGN-IN-WITH-X header", () =>
    run(Effect.gen(function*() {
      const redownloads = yield* Redownloads
      expect(yield* redownloads.challengeFor("chk_unknown", false)).toEqual(Option.none())
      expect(brief(yield* failureOf(Effect.scoped(redownloads.redeem("chk_unknown", false, "anything", CLIENT))))).toMatchObject({ _tag: "NotFound" })
      const { checkout } = yield* listed()
      const challenge = Option.getOrThrow(yield* redownloads.challengeFor(checkout.id, false))
      expect(challenge.uri).toBe(`${BASE_URL}/checkout/${checkout.id}/test`)
      const error = yield* failureOf(Effect.scoped(redownloads.redeem(checkout.id, false, "not a proof", CLIENT)))
      expect(brief(error)).toMatchObject({ _tag: "InvalidInput" })
      expect((error as { errors: ReadonlyArray<{ field: string }> }).errors.map((e) => e.field)).toEqual(["SIGN-IN-WITH-X"])
    })))
})

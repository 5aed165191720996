/*
 * Issue 39, on memory adapters: every way to a purchase's goods after the purchase — the receipt link, an update
 * delivery's own link, `/latest`, a wallet's proof, the buyer's payment-identifier retry with `?updates=latest` —
 * is admitted by the sale's re-download limits BEFORE the code host is asked, so a refusal costs no code-host
 * call; a provenance is read from the archive the ledger recorded when the goods went out (never by downloading),
 * within a budget of its own. The memory code host counts the calls that reach it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, Option, Redacted, Stream, TestClock } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import type { Checkout } from "../../domain/Checkout.js"
import type { SubmittedPayment } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { StorageError } from "../../ports/StorageError.js"
import { WalletProof } from "../../ports/WalletProof.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import {
  PROVENANCE_PER_CLIENT_PER_HOUR,
  PROVENANCE_PER_RECEIPT_PER_HOUR,
  REDOWNLOADS_PER_CLIENT_PER_HOUR,
  REDOWNLOADS_PER_RECEIPT_PER_HOUR,
  Redownloads
} from "../../domain/usecases/Redownloads.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { unique } from "../../testing/Fixtures.js"
import { atNow, brief, failureOf, listedWidget, NOW, portsOf, SHA, sold, WIDGET } from "./memoryApp.js"
import { signedPayment } from "./support.js"

type Ledger = SaleLedger["Type"]

const CLIENT = "203.0.113.39"
const HOUR_MS = 60 * 60 * 1000
const NEW_SHA = "fedcba9876543210fedcba9876543210fedcba98"

/** A wallet proof taken at its word (a JSON ProvenWallet): the SIWX signature is WalletProofSiwx's to test. */
const WalletProofTrusting = Layer.succeed(WalletProof, {
  verify: (proof) =>
    Effect.sync(() => {
      const w = JSON.parse(proof) as { address: string; network: string; nonce: string; issuedAt: string; expiresAt: string }
      return { address: w.address, network: w.network, nonce: w.nonce, issuedAt: new Date(w.issuedAt), expiresAt: new Date(w.expiresAt) }
    })
})

const appOf = (wrap: (ledger: Ledger) => Ledger = (l) => l) =>
  Redownloads.Default.pipe(
    Layer.provideMerge(Purchases.Default),
    Layer.provideMerge(Listings.Default),
    Layer.provideMerge(Settlements.Default),
    Layer.provideMerge(Layer.mergeAll(Layer.effect(SaleLedger, Effect.map(SaleLedger, wrap)), WalletProofTrusting).pipe(Layer.provideMerge(portsOf())))
  )

const run = <A, E>(effect: Effect.Effect<A, E, any>, wrap?: (ledger: Ledger) => Ledger) =>
  Effect.provide(Effect.zipRight(atNow, effect), appOf(wrap)) as Effect.Effect<A, E>

const calls = Effect.flatMap(CodeHostMemoryControl, (c) => c.calls)
const push = (headSha: string) => Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha, files: { ...WIDGET.files, "NEWS.md": "new\n" } }))
const byReceipt = (token: string, client = CLIENT) => Effect.scoped(Effect.flatMap(Redownloads, (r) => r.byReceipt(token, client)))
const latestByReceipt = (token: string, client = CLIENT) => Effect.scoped(Effect.flatMap(Redownloads, (r) => r.latestByReceipt(token, client)))
const provenance = (token: string, client = CLIENT) => Effect.flatMap(Purchases, (p) => p.provenance(token, client))
const tokenOf = (receipt: string) => receipt.slice(receipt.lastIndexOf("/downloads/") + "/downloads/".length)
const times = <A, E, R>(n: number, effect: Effect.Effect<A, E, R>) => Effect.forEach(Array.from({ length: n }), () => effect)
/** The error tags of `n` tries (`"ok"` for an answer). */
const outcomes = <A, E, R>(n: number, effect: Effect.Effect<A, E, R>) =>
  times(n, Effect.match(effect, { onFailure: (e) => (e as { _tag: string })._tag, onSuccess: () => "ok" }))

describe("re-downloads are admitted before the code host is asked", () => {
  it.effect(`a receipt link asked ${REDOWNLOADS_PER_RECEIPT_PER_HOUR + 40} times: ${REDOWNLOADS_PER_RECEIPT_PER_HOUR} make goods, the refusals cost the code host nothing`, () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      const before = yield* calls
      expect(yield* outcomes(REDOWNLOADS_PER_RECEIPT_PER_HOUR, byReceipt(token))).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill("ok"))
      const admitted = (yield* calls) - before
      expect(admitted).toBeGreaterThan(0)
      expect(yield* outcomes(40, byReceipt(token, `198.51.100.${unique().length}`))).toEqual(Array(40).fill("RateLimited"))
      expect((yield* calls) - before).toBe(admitted)
    })))

  it.effect("an expired or unknown link is refused as before, and spends nothing of the sale's budget", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      expect(brief(yield* failureOf(byReceipt(`${token}x`)))).toMatchObject({ _tag: "NotFound" })
      yield* TestClock.adjust(8 * 24 * HOUR_MS)
      expect(yield* outcomes(REDOWNLOADS_PER_RECEIPT_PER_HOUR + 2, byReceipt(token))).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR + 2).fill("ReceiptExpired"))
    })))

  it.effect("a wallet's proof past the sale's budget is refused before its goods are made: no code-host call", () =>
    run(Effect.gen(function*() {
      const { sale, checkout } = yield* sold()
      const redeem = Effect.gen(function*() {
        const redownloads = yield* Redownloads
        const challenge = Option.getOrThrow(yield* redownloads.challengeFor(checkout.id, false))
        const proof = JSON.stringify({ address: sale.payer, network: challenge.networks[0]!.network, nonce: challenge.nonce, issuedAt: challenge.issuedAt.toISOString(), expiresAt: challenge.expiresAt.toISOString() })
        return yield* Effect.scoped(redownloads.redeem(checkout.id, false, proof, CLIENT))
      })
      yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, redeem)
      const before = yield* calls
      expect(yield* outcomes(5, redeem)).toEqual(Array(5).fill("RateLimited"))
      expect(yield* calls).toBe(before)
    })))

  it.effect("/latest and an update's own link share the sale's budget; refused, they ask nothing", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      yield* push(NEW_SHA)
      const update = yield* latestByReceipt(token)
      expect(update.update?.commitSha).toBe(NEW_SHA)
      yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR - 2, byReceipt(tokenOf(update.receipt)))
      expect(yield* outcomes(1, latestByReceipt(token))).toEqual(["ok"])
      const before = yield* calls
      expect(yield* outcomes(3, latestByReceipt(token))).toEqual(Array(3).fill("RateLimited"))
      expect(yield* outcomes(3, byReceipt(tokenOf(update.receipt)))).toEqual(Array(3).fill("RateLimited"))
      expect(yield* calls).toBe(before)
    })))
})

describe("the buyer's payment-identifier retry with ?updates=latest is counted", () => {
  const withId = (payment: SubmittedPayment): SubmittedPayment => ({ ...payment, paymentId: Redacted.make(`pay_${unique()}0123456789abcdef`) })
  const bought = Effect.gen(function*() {
    const { listing, checkout } = yield* listedWidget()
    const quote = yield* Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false))
    const requirement = quote.requirements.find((r) => r.chain === "base")!
    return { listing, checkout, payment: withId(yield* signedPayment(privateKeyToAccount(generatePrivateKey()), requirement, NOW)) }
  })
  const pay = (checkout: Checkout, payment: SubmittedPayment, latest: boolean, client = CLIENT) =>
    Effect.flatMap(Purchases, (p) => p.pay(checkout.id, false, payment, client, latest))

  it.effect(`against the sale's re-download budget: ${REDOWNLOADS_PER_RECEIPT_PER_HOUR} an hour, then RateLimited with no code-host call; /latest by the receipt is then refused too`, () =>
    run(Effect.gen(function*() {
      const { checkout, payment } = yield* bought
      const first = yield* pay(checkout, payment, false)
      yield* push(NEW_SHA)
      const tries = yield* outcomes(REDOWNLOADS_PER_RECEIPT_PER_HOUR, pay(checkout, payment, true))
      expect(tries).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill("ok"))
      const before = yield* calls
      expect(yield* outcomes(5, pay(checkout, payment, true, "198.51.100.40"))).toEqual(Array(5).fill("RateLimited"))
      expect(yield* calls).toBe(before)
      expect(yield* outcomes(1, latestByReceipt(tokenOf(first.receipt), "198.51.100.41"))).toEqual(["RateLimited"])
      // The commit paid for, by the same retry without latest, is the purchase's own answer: not a re-download.
      expect((yield* pay(checkout, payment, false)).update).toBeNull()
      yield* TestClock.adjust(HOUR_MS)
      expect((yield* pay(checkout, payment, true)).update?.commitSha).toBe(NEW_SHA)
    })))

  it.effect(`against the client's budget too: an address that spent its ${REDOWNLOADS_PER_CLIENT_PER_HOUR} re-downloads an hour on receipt links gets RateLimited for the retry, with no code-host call; another address is served`, () =>
    run(Effect.gen(function*() {
      const { checkout, listing, payment } = yield* bought
      yield* pay(checkout, payment, false)
      yield* push(NEW_SHA)
      const receipts = yield* Effect.forEach(Array.from({ length: REDOWNLOADS_PER_CLIENT_PER_HOUR / REDOWNLOADS_PER_RECEIPT_PER_HOUR }), () => sold({ of: { listing, checkout } }))
      for (const { token } of receipts) yield* times(REDOWNLOADS_PER_RECEIPT_PER_HOUR, byReceipt(token, "198.51.100.50"))
      const before = yield* calls
      expect(yield* outcomes(1, pay(checkout, payment, true, "198.51.100.50"))).toEqual(["RateLimited"])
      expect(yield* calls).toBe(before)
      expect((yield* pay(checkout, payment, true, "198.51.100.51")).update?.commitSha).toBe(NEW_SHA)
    })))
})

describe("provenance is read from what the ledger recorded, never by downloading", () => {
  it.effect("goods record their archive (the sale's, an update's under its own id); provenance attests it with no code-host call", () =>
    run(Effect.gen(function*() {
      const { sale, token } = yield* sold({ livemode: true })
      const ledger = yield* SaleLedger
      expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.none())
      const goods = yield* byReceipt(token)
      expect(goods.digest).not.toBeNull()
      expect(yield* ledger.findDigest(sale.id)).toStrictEqual(Option.some(goods.digest))
      yield* push(NEW_SHA)
      const update = yield* latestByReceipt(token)
      expect(yield* ledger.findDigest(update.update!.id)).toStrictEqual(Option.some(update.digest))
      expect(update.digest).not.toStrictEqual(goods.digest)

      const before = yield* calls
      for (const [link, delivered] of [[token, goods], [tokenOf(update.receipt), update]] as const) {
        const envelope = yield* provenance(link)
        const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
        expect(statement.subject).toStrictEqual([{ name: delivered.filename, digest: { sha256: delivered.digest!.sha256 } }])
        expect(statement.predicate).toMatchObject({ sale: sale.id, size: delivered.digest!.size, commit: delivered.update?.commitSha ?? SHA })
      }
      expect(yield* calls).toBe(before)
    })))

  it.effect("no archive recorded: NotFound, and the code host is not asked", () =>
    run(Effect.gen(function*() {
      const { token } = yield* sold()
      const before = yield* calls
      expect(brief(yield* failureOf(provenance(token)))).toMatchObject({ _tag: "NotFound", detail: expect.stringContaining("download it once") })
      expect(yield* calls).toBe(before)
      // Once the goods went out, it is there.
      yield* byReceipt(token)
      yield* provenance(token)
    })))

  it.effect(`a budget of its own: ${PROVENANCE_PER_RECEIPT_PER_HOUR} a sale and ${PROVENANCE_PER_CLIENT_PER_HOUR} a client an hour, then RateLimited; downloads are not spent`, () =>
    run(Effect.gen(function*() {
      const { checkout, listing, token } = yield* sold()
      yield* byReceipt(token)
      expect(yield* outcomes(PROVENANCE_PER_RECEIPT_PER_HOUR, provenance(token))).toEqual(Array(PROVENANCE_PER_RECEIPT_PER_HOUR).fill("ok"))
      expect(yield* outcomes(3, provenance(token, "198.51.100.42"))).toEqual(Array(3).fill("RateLimited"))
      expect(yield* outcomes(REDOWNLOADS_PER_RECEIPT_PER_HOUR - 1, byReceipt(token))).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR - 1).fill("ok"))
      // The client's own budget, over its receipts: the rest of its hour on other sales, then refused.
      const other = yield* sold({ of: { listing, checkout } })
      const third = yield* sold({ of: { listing, checkout } })
      yield* byReceipt(other.token)
      yield* byReceipt(third.token)
      const left = PROVENANCE_PER_CLIENT_PER_HOUR - PROVENANCE_PER_RECEIPT_PER_HOUR
      expect(left).toBeLessThanOrEqual(PROVENANCE_PER_RECEIPT_PER_HOUR)
      expect(yield* outcomes(left, provenance(other.token))).toEqual(Array(left).fill("ok"))
      expect(yield* outcomes(1, provenance(third.token))).toEqual(["RateLimited"])
      expect(yield* outcomes(1, provenance(third.token, "198.51.100.43"))).toEqual(["ok"])
      // An unknown link is NotFound before any budget.
      expect(brief(yield* failureOf(provenance(`${token}x`)))).toMatchObject({ _tag: "NotFound" })
    })))

  it.effect("goods the code host cannot make now (the repository gone) record nothing: the provenance stays NotFound", () =>
    run(Effect.gen(function*() {
      const { sale, token } = yield* sold()
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.remove(WIDGET.owner, WIDGET.name))
      const goods = yield* byReceipt(token)
      expect(goods.digest).toBeNull()
      expect(Exit.isFailure(yield* Effect.exit(Stream.runDrain(goods.body)))).toBe(true)
      expect(yield* (yield* SaleLedger).findDigest(sale.id)).toStrictEqual(Option.none())
      expect(brief(yield* failureOf(provenance(token)))).toMatchObject({ _tag: "NotFound" })
    })))

  it.effect("a ledger that cannot record the archive does not hold back the goods (the next download records it); the operator reads why", () => {
    let failing = true
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => void lines.push(Array.isArray(message) ? message.join(" ") : String(message)))
    return run(
      Effect.gen(function*() {
        const { sale, token } = yield* sold()
        const goods = yield* byReceipt(token).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(goods.digest).not.toBeNull()
        expect(yield* (yield* SaleLedger).findDigest(sale.id)).toStrictEqual(Option.none())
        expect(lines).toContain(`The archive delivered for sale ${sale.id} could not be recorded now; its provenance waits for the next download`)
        failing = false
        yield* byReceipt(token)
        expect(yield* (yield* SaleLedger).findDigest(sale.id)).toStrictEqual(Option.some(goods.digest))
      }),
      (ledger) => ({
        ...ledger,
        recordDigest: (archive) =>
          Effect.suspend(() => failing ? Effect.fail(new StorageError({ unavailable: true, message: "down" })) : ledger.recordDigest(archive))
      })
    )
  })
})

/*
 * Purchases.pay and the checkout it pays, on memory adapters: the real local payment checks (an EIP-3009
 * authorization signed with viem), a seeded memory code host, and a facilitator whose verify, settle and
 * chain answers each test scripts. Every test names the bug or attack it stops: a stale price paid, goods
 * for a refused settle the chain does not prove, a failed sale whose money may have moved.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Deferred, Effect, Exit, Fiber, Layer, Option, Redacted, Stream, TestClock } from "effect"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { generateKeyPairSigner } from "@solana/kit"
import { solanaPayload, standardHead } from "../support/solanaByHand.js"
import { gunzipSync } from "node:zlib"
import { Checkout as CheckoutClass, type Checkout } from "../../domain/Checkout.js"
import { CheckoutId, RepoRef, SaleId } from "../../domain/Ids.js"
import { receiptToken } from "../../domain/rules/Receipt.js"
import { Listing } from "../../domain/Listing.js"
import { AUTHORIZATION_CANCELED, AUTHORIZATION_USED_ELSEWHERE, TRANSACTION_FAILED, TRANSFER_MISMATCH } from "../../domain/SettlementReasons.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Chains } from "../../ports/Chains.js"
import { type CheckoutGone, NotFound, NotSelling, PaymentIdConflict, PaymentRejected, PaymentsUnavailable, SettlementPending } from "../../domain/Errors.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { FacilitatorError, type PaymentRequirement, type SettlementStatus, type SubmittedPayment } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { memoryPorts } from "../../testing/MemoryPorts.js"
import { CodeHostMemoryControl, type FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { CodeHost } from "../../ports/CodeHost.js"
import type { Chain } from "../../domain/Wallet.js"
import { hostPatAad } from "../../domain/Listing.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { AtomicAmount } from "../../domain/Money.js"
import { aCheckout, aListing, aSale as aSaleFixture, at, BASE_ADDRESS, SOLANA_ADDRESS } from "../support/fixtures.js"
import { type Answers, facilitatorLayer, signedPayment, spanNames, stubFacilitator } from "./support.js"
import { offersExtension } from "../../codec/OfferReceipt.js"
import { commitMovedDetail, notVerifiedDetail, OFFER_MISMATCH } from "../../domain/usecases/purchases/Messages.js"

const BASE_URL = "https://market.example"
const SHA = "89abcdef0123456789abcdef0123456789abcdef"
const WIDGET = { owner: "Octo-Org", name: "Widget", headSha: SHA, files: { "README.md": "# Widget\n", "src/index.ts": "export {}\n" } }
const GADGET = { ...WIDGET, name: "Gadget" }
const NOW = at("2024-03-01T12:00:00.000Z")
const CLIENT = "203.0.113.7"

type Ledger = SaleLedger["Type"]
type Store = ListingStore["Type"]
type Host = CodeHost["Type"]

/** The Solana fee payer the stub facilitators name (the buyer's transaction leaves its signature slot empty). */
const FEE_PAYER = (await generateKeyPairSigner()).address

/**
 * Purchases on memory ports, with a live and a test facilitator answering as scripted; `wrap` and `wrapStore`
 * decorate the ledger and the listing store every use case (and the test) sees.
 */
const setup = (options: {
  readonly test?: Answers
  readonly live?: Answers | null
  readonly wrap?: (ledger: Ledger) => Ledger
  readonly wrapStore?: (store: Store) => Store
  readonly wrapHost?: (host: Host) => Host
  readonly extra?: (chain: Chain, livemode: boolean) => Readonly<Record<string, string>> | null
  readonly repos?: ReadonlyArray<FakeRepo>
} = {}) => {
  const test = stubFacilitator(options.test ?? {})
  const live = options.live === null ? Option.none() : Option.some(stubFacilitator(options.live ?? {}))
  const facilitators = facilitatorLayer({ live, test }, options.extra ?? ((chain) => chain === "solana" ? { feePayer: FEE_PAYER } : {}))
  const ports = Layer.merge(memoryPorts({ baseUrl: BASE_URL, repos: options.repos ?? [WIDGET, GADGET] }), facilitators)
  const wrapped = Layer.mergeAll(
    Layer.effect(SaleLedger, Effect.map(SaleLedger, options.wrap ?? ((l) => l))),
    Layer.effect(ListingStore, Effect.map(ListingStore, options.wrapStore ?? ((s) => s))),
    Layer.effect(CodeHost, Effect.map(CodeHost, options.wrapHost ?? ((h) => h)))
  ).pipe(Layer.provideMerge(ports))
  const layer = Purchases.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(Listings.Default, Settlements.Default)),
    Layer.provideMerge(wrapped)
  )
  return { test, live: Option.getOrUndefined(live), layer }
}

/**
 * A ledger whose payment lookups miss as many times as `miss` says (counted down): a copy of a payment that
 * raced past them while another copy was being recorded. `failRecord` makes the next recordPending calls die.
 */
const racing = (miss: { byKey: number; byId: number; failRecord: number }) => (ledger: Ledger): Ledger => ({
  ...ledger,
  findByPaymentKey: (key) => Effect.suspend(() => miss.byKey > 0 ? (miss.byKey--, Effect.succeedNone) : ledger.findByPaymentKey(key)),
  findByPaymentId: (network, payer, digest) =>
    Effect.suspend(() => miss.byId > 0 ? (miss.byId--, Effect.succeedNone) : ledger.findByPaymentId(network, payer, digest)),
  recordPending: (sale) => Effect.suspend(() => miss.failRecord > 0 ? (miss.failRecord--, Effect.die(new Error("disk full"))) : ledger.recordPending(sale))
})

/** The widget listed (anonymously, public repo, Base payout) with its current checkout, stored; the clock at NOW. */
const listed = (fields: Partial<ConstructorParameters<typeof Listing>[0]> = {}) =>
  Effect.gen(function*() {
    const store = yield* ListingStore
    const listing = aListing({ repo: new RepoRef({ owner: WIDGET.owner, name: WIDGET.name }), hostPat: null, ...fields })
    const checkout = aCheckout(listing)
    yield* store.insert(listing)
    yield* store.insertCheckout(checkout)
    yield* TestClock.setTime(NOW.getTime())
    return { listing, checkout }
  })

/** The requirement a buyer would be quoted for `checkout`'s terms in test mode, built from the chain's facts. */
const termsOf = (checkout: Checkout) =>
  Effect.map(Chains, (chains): PaymentRequirement => {
    const facts = chains.facts("base", false)
    return {
      chain: "base",
      livemode: false,
      scheme: "exact",
      network: facts.network,
      v1Network: facts.v1Network,
      asset: facts.asset,
      amount: checkout.price!,
      payTo: checkout.payTo.base!,
      maxTimeoutSeconds: 300,
      resource: `${BASE_URL}/checkout/${checkout.id}/test`,
      description: "",
      extra: facts.extra
    }
  })

/** An EIP-3009 authorization for `requirement`, signed by `buyer` with viem, valid for 10 minutes from NOW. */
const signed = (buyer: PrivateKeyAccount, requirement: PaymentRequirement) => signedPayment(buyer, requirement, NOW)

const aBuyer = () => privateKeyToAccount(generatePrivateKey())

/** The sale the ledger holds for a payment (one per payment key: network + payer + nonce). */
const saleOf = (payment: SubmittedPayment) =>
  Effect.gen(function*() {
    const identity = yield* Effect.flatMap(Chains, (c) => c.paymentIdentity("base", payment.payload))
    return yield* Effect.flatMap(SaleLedger, (l) => l.findByPaymentKey(`${payment.network}:${identity.key}`))
  })

const pay = (checkout: Checkout, payment: SubmittedPayment, options: { readonly livemode?: boolean; readonly client?: string } = {}) =>
  Effect.flatMap(Purchases, (p) => p.pay(checkout.id, options.livemode ?? false, payment, options.client ?? CLIENT))

/** Waits a few real milliseconds: for work outside Effect's clock (signature checks) to get on. */
const realWait = (ms = 2) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Moves the TestClock on in small steps until the fiber is done (a retry's waits for a settle in flight), then joins it. */
const runToEnd = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* realWait()
      yield* TestClock.adjust("250 millis")
    }
    return yield* Fiber.join(fiber)
  })

/** The bytes of a goods stream. */
const bytesOf = (body: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(Stream.orDie(body)), (chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks)))

/** A copy of the payment carrying the buyer's x402 payment-identifier id. */
const withId = (payment: SubmittedPayment, id: string): SubmittedPayment => ({ ...payment, paymentId: Redacted.make(id) })

describe("Purchases: which checkout can be paid", () => {
  it.effect("refuses (410) a checkout orphaned by two concurrent reprices (not voided, but no longer the listing's): its stale price is never payable, and nothing reaches the facilitator", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { listing, checkout: orphan } = yield* listed()
      // The winning reprice points the listing at its own checkout; the loser's stays unvoided.
      const store = yield* ListingStore
      const winner = aCheckout(listing, { id: CheckoutId.make("chk_winner"), price: AtomicAmount.make(listing.price! * 2n) })
      yield* store.insertCheckout(winner)
      yield* store.update(new Listing({ ...listing, checkoutId: winner.id }))

      const purchases = yield* Purchases
      const gone = yield* Effect.flip(purchases.current(orphan.id))
      expect(gone).toMatchObject({ _tag: "CheckoutGone", page: `${BASE_URL}/r/Octo-Org/Widget` })
      expect((gone as CheckoutGone).detail).toContain(`${BASE_URL}/r/Octo-Org/Widget`)
      expect(yield* Effect.flip(purchases.quote(orphan.id, false))).toMatchObject({ _tag: "CheckoutGone" })

      const payment = yield* signed(aBuyer(), yield* termsOf(orphan))
      expect(yield* Effect.flip(pay(orphan, payment))).toMatchObject({ _tag: "CheckoutGone" })
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
      expect(yield* saleOf(payment)).toStrictEqual(Option.none())

      // The listing's own checkout is the current one.
      expect(yield* purchases.current(winner.id)).toMatchObject({ checkout: { id: winner.id }, listing: { id: listing.id } })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (410) a voided checkout, one whose listing was taken down and one whose listing is gone; an unknown one is 404", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* ListingStore
      const purchases = yield* Purchases
      const { checkout: voided } = yield* listed()
      yield* store.voidCheckout(voided.id, NOW)
      expect(yield* Effect.flip(purchases.current(voided.id))).toMatchObject({ _tag: "CheckoutGone" })

      const { listing, checkout: takenDown } = yield* listed({ repo: new RepoRef({ owner: "Octo-Org", name: "Other" }) })
      yield* store.update(new Listing({ ...listing, status: "taken_down", takenDownAt: NOW }))
      expect(yield* Effect.flip(purchases.current(takenDown.id))).toMatchObject({ _tag: "CheckoutGone", page: `${BASE_URL}/r/Octo-Org/Other` })

      const orphan = aCheckout(aListing({ repo: new RepoRef({ owner: "Octo-Org", name: "Gone" }) }))
      yield* store.insertCheckout(orphan)
      expect(yield* Effect.flip(purchases.current(orphan.id))).toMatchObject({ _tag: "CheckoutGone" })

      expect(yield* Effect.flip(purchases.current("chk_nobody"))).toMatchObject({ _tag: "NotFound" })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: a settle the facilitator refused is judged by the chain", () => {
  const refused = (status: SettlementStatus, errorReason: string | null = "unexpected_settle_error"): Answers => ({
    settle: (_, requirement) => Effect.succeed({ success: false, transaction: null, network: requirement.network, payer: null, errorReason }),
    status: () => Effect.succeed(status)
  })

  it.effect("delivers when the chain shows the very transfer final (someone broadcast the buyer's authorization first): the sale settles with the chain's transaction", () => {
    const { test, layer } = setup({ test: refused({ _tag: "Settled", transaction: "0xchain" }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const buyer = aBuyer()
      const payment = yield* signed(buyer, yield* termsOf(checkout))
      const goods = yield* pay(checkout, payment)
      expect(goods.settlement).toStrictEqual({ success: true, transaction: "0xchain", network: "eip155:84532", payer: buyer.address, errorReason: null })
      expect(goods.sale).toMatchObject({ status: "settled", transaction: "0xchain", payer: buyer.address, commitSha: SHA })
      expect(goods.filename).toBe("Octo-Org-Widget-89abcde.tar.gz")
      expect(goods.receipt).toMatch(new RegExp(`^${BASE_URL}/downloads/`))
      expect(Option.getOrThrow(yield* saleOf(payment))).toStrictEqual(goods.sale)
      expect(test.calls).toStrictEqual({ status: 1, verify: 1, settle: 1 })
      const bytes = Buffer.concat(Chunk.toReadonlyArray(yield* Stream.runCollect(goods.body)))
      expect(gunzipSync(bytes).toString("utf8")).toContain("TEST purchase")
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers 503 settlement pending and keeps the sale pending while what the buyer signed is on chain but not final (the money may have moved: never failed, never delivered)", () => {
    const { layer } = setup({ test: refused({ _tag: "NotFinal", reason: "not final yet" }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending", retryAfterSeconds: 10 })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: null, transaction: null })
    }).pipe(Effect.provide(layer))
  })

  it.effect("with no evidence either way (the chain cannot be asked), the buyer is told the refusal in words, nothing is delivered, and the sale stays pending: never failed without the chain's word", () => {
    const { layer } = setup({ test: refused({ _tag: "Unknown", reason: "BASE_RPC_URL is off" }, "insufficient_funds") })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const failed = yield* Effect.flip(pay(checkout, payment))
      expect(failed).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      expect(failed._tag === "SettlementFailed" && failed.detail).toContain("does not hold enough USDC")
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: "insufficient_funds", transaction: null })
    }).pipe(Effect.provide(layer))
  })

  it.effect("fails the sale with the chain's reason when the authorization was spent by another transfer of the payer (nonce twin): no goods", () => {
    const { layer } = setup({ test: refused({ _tag: "Failed", reason: AUTHORIZATION_USED_ELSEWHERE }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const buyer = aBuyer()
      const payment = yield* signed(buyer, yield* termsOf(checkout))
      const failed = yield* Effect.flip(pay(checkout, payment))
      expect(failed).toMatchObject({ _tag: "SettlementFailed", reason: AUTHORIZATION_USED_ELSEWHERE, network: "eip155:84532", payer: buyer.address })
      expect(failed._tag === "SettlementFailed" && failed.detail).toContain("used on chain by another transfer")
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "failed", failureReason: AUTHORIZATION_USED_ELSEWHERE })
    }).pipe(Effect.provide(layer))
  })

  it.effect("tells the buyer why in words: a cancelled authorization, a transaction failed on chain and one that pays something else each have their own explanation", () => {
    const cases = [
      [AUTHORIZATION_CANCELED, "cancelled the payment's authorization"],
      [TRANSACTION_FAILED, "transaction failed on chain"],
      [TRANSFER_MISMATCH, "does not pay this sale"]
    ] as const
    return Effect.forEach(cases, ([reason, words]) => {
      const { layer } = setup({ test: refused({ _tag: "Failed", reason }) })
      return Effect.gen(function*() {
        const { checkout } = yield* listed()
        const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
        const failed = yield* Effect.flip(pay(checkout, payment))
        expect(failed).toMatchObject({ _tag: "SettlementFailed", reason })
        expect(failed._tag === "SettlementFailed" && failed.detail).toContain(words)
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("a refusal the chain shows nothing of: 402 with the facilitator's reason in words and the authorization's deadline; the sale stays pending until then, so a transfer landing later still finds it", () => {
    const { layer } = setup({ test: refused({ _tag: "Unsettled" }, "invalid_exact_evm_transaction_simulation_failed") })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const buyer = aBuyer()
      const payment = yield* signed(buyer, yield* termsOf(checkout))
      const failed = yield* Effect.flip(pay(checkout, payment))
      expect(failed).toMatchObject({ _tag: "SettlementFailed", reason: "invalid_exact_evm_transaction_simulation_failed", payer: buyer.address })
      const detail = failed._tag === "SettlementFailed" ? failed.detail : ""
      expect(detail).toContain("the USDC contract refused this transfer")
      expect(detail).toContain("nothing was delivered")
      expect(detail).toContain(new Date(NOW.getTime() + 600_000).toISOString())
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: "invalid_exact_evm_transaction_simulation_failed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("names settlement_failed when the facilitator's refusal names no reason; the sale stays pending", () => {
    const { layer } = setup({ test: refused({ _tag: "Unsettled" }, null) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const failed = yield* Effect.flip(pay(checkout, payment))
      expect(failed).toMatchObject({ _tag: "SettlementFailed", reason: "settlement_failed" })
      expect(failed._tag === "SettlementFailed" && failed.detail).toContain("the facilitator refused it (settlement_failed)")
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: "settlement_failed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a refused sale whose transfer lands before its authorization expires is settled by the chain (the reconciler's resolve), and the buyer's retry with its id gets the goods", () => {
    let onChain: SettlementStatus = { _tag: "Unsettled" }
    const { layer } = setup({
      test: {
        settle: (_, requirement) => Effect.succeed({ success: false, transaction: null, network: requirement.network, payer: null, errorReason: "insufficient_funds" }),
        status: () => Effect.succeed(onChain)
      }
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_refused0000000000000000000001")
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      const pending = Option.getOrThrow(yield* saleOf(payment))
      // The payer funded the wallet and submitted the signed authorization itself.
      onChain = { _tag: "Settled", transaction: "0xlanded" }
      expect(pending).toMatchObject({ status: "pending", failureReason: "insufficient_funds" })
      expect(yield* Effect.flatMap(Settlements, (s) => s.resolve(pending))).toMatchObject({ status: "settled", transaction: "0xlanded", failureReason: null })
      const goods = yield* pay(checkout, payment)
      expect(goods.sale).toMatchObject({ id: pending.id, status: "settled", transaction: "0xlanded" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a refused sale with nothing on chain fails only once its authorization has expired (settleBy + margin)", () => {
    const { layer } = setup({ test: refused({ _tag: "Unsettled" }, "insufficient_funds") })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* Effect.flip(pay(checkout, payment))
      const pending = Option.getOrThrow(yield* saleOf(payment))
      const resolve = Effect.flatMap(Settlements, (s) => s.resolve(pending))
      expect(yield* resolve).toMatchObject({ status: "pending" })
      yield* TestClock.setTime(pending.settleBy!.getTime() + 60_001)
      expect(yield* resolve).toMatchObject({ status: "failed", failureReason: "insufficient_funds" })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: a settle answer that is not final (x402's settlement_pending, or a broadcast transaction) is no refusal", () => {
  const answering = (errorReason: string, transaction: string | null, status: () => SettlementStatus): Answers => ({
    settle: (_, requirement) => Effect.succeed({ success: false, transaction, network: requirement.network, payer: null, errorReason }),
    status: () => Effect.succeed(status())
  })

  it.effect("settlement_pending with the broadcast transaction, not mined yet: 503 with Retry-After, the sale pending (never failed); once final on chain the buyer's retry with its id gets the goods, settled with that transaction, exactly one settle", () => {
    let onChain: SettlementStatus = { _tag: "Unsettled" }
    const { test, layer } = setup({ test: answering("settlement_pending", "0xbroadcast", () => onChain) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_pending00000000000000000000001")
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending", retryAfterSeconds: 10 })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: null })
      // Mined, not final yet: still pending for the retry.
      onChain = { _tag: "NotFinal", reason: "not final yet" }
      expect(yield* runToEnd(yield* Effect.fork(Effect.flip(pay(checkout, payment))))).toMatchObject({ _tag: "SettlementPending" })
      expect(Option.getOrThrow(yield* saleOf(payment)).status).toBe("pending")
      onChain = { _tag: "Settled", transaction: "0xbroadcast" }
      const goods = yield* runToEnd(yield* Effect.fork(pay(checkout, payment)))
      expect(goods.sale).toMatchObject({ status: "settled", transaction: "0xbroadcast" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("settlement_pending already final on chain when asked: the goods at once", () => {
    const { layer } = setup({ test: answering("settlement_pending", "0xbroadcast", () => ({ _tag: "Settled", transaction: "0xbroadcast" })) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const goods = yield* pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout)))
      expect(goods.sale).toMatchObject({ status: "settled", transaction: "0xbroadcast" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("settlement_pending without a transaction, and a terminal-sounding refusal that names the broadcast transaction (the official facilitator's invalid_transaction_state), each leave the sale pending with 503", () => {
    const cases = [["settlement_pending", null], ["settlement_pending", ""], ["invalid_transaction_state", "0xbroadcast"]] as const
    return Effect.forEach(cases, ([reason, tx]) => {
      const { layer } = setup({ test: answering(reason, tx, () => ({ _tag: "Unsettled" })) })
      return Effect.gen(function*() {
        const { checkout } = yield* listed()
        const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
        expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending" })
        expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: null })
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("a refusal whose transaction is empty (x402 answers \"\" for none) is a refusal: 402, the sale pending with the refusal noted", () => {
    const { layer } = setup({ test: answering("insufficient_funds", "", () => ({ _tag: "Unsettled" })) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "pending", failureReason: "insufficient_funds" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a broadcast whose authorization the chain shows spent otherwise is failed with the chain's reason", () => {
    const { layer } = setup({ test: answering("settlement_pending", "0xbroadcast", () => ({ _tag: "Failed", reason: AUTHORIZATION_USED_ELSEWHERE })) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementFailed", reason: AUTHORIZATION_USED_ELSEWHERE })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "failed", failureReason: AUTHORIZATION_USED_ELSEWHERE })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: the order of a purchase (check locally, verify, pin, record, settle, deliver)", () => {
  it.effect("records the sale with the terms paid, the commit pinned before the settle and the authorization's validBefore as settleBy, then delivers with the facilitator's transaction", () => {
    const { test, layer } = setup({
      test: { settle: (_, r) => Effect.succeed({ success: true, transaction: "0xfacilitator", network: r.network, payer: null, errorReason: null }) }
    })
    return Effect.gen(function*() {
      const { listing, checkout } = yield* listed({ accountId: null })
      const buyer = aBuyer()
      const requirement = yield* termsOf(checkout)
      const payment = yield* signed(buyer, requirement)
      const goods = yield* pay(checkout, payment)
      const sale = Option.getOrThrow(yield* saleOf(payment))
      expect(sale).toStrictEqual(goods.sale)
      expect(sale).toMatchObject({
        listingId: listing.id,
        checkoutId: checkout.id,
        accountId: null,
        repo: "Octo-Org/Widget",
        livemode: false,
        chain: "base",
        network: "eip155:84532",
        asset: requirement.asset,
        amount: checkout.price,
        payTo: requirement.payTo,
        payer: buyer.address,
        commitSha: SHA,
        transaction: "0xfacilitator",
        status: "settled",
        failureReason: null,
        createdAt: NOW,
        settledAt: NOW,
        settleBy: new Date(NOW.getTime() + 600_000),
        paymentIdDigest: null
      })
      // The payer is optional in a settle answer: the receipt still names the one who signed.
      expect(goods.settlement).toStrictEqual({ success: true, transaction: "0xfacilitator", network: "eip155:84532", payer: buyer.address, errorReason: null })
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps the sale pending and answers 503 when the settle call had no answer (timeout, 5xx): the money may have moved, so the sale is neither failed nor delivered, and the chain is not asked yet", () => {
    const { test, layer } = setup({ test: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "no answer" })) } })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending", retryAfterSeconds: 10 })
      expect(Option.getOrThrow(yield* saleOf(payment)).status).toBe("pending")
      expect(test.calls.status).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses a payment the facilitator does not verify, with its reason, recording nothing and settling nothing", () => {
    const cases = [["invalid_exact_evm_insufficient_balance", "invalid_exact_evm_insufficient_balance"], [null, "invalid_payment"]] as const
    return Effect.forEach(cases, ([given, reason]) => {
      const { test, layer } = setup({ test: { verify: () => Effect.succeed({ valid: false, invalidReason: given, payer: null }) } })
      return Effect.gen(function*() {
        const { checkout } = yield* listed()
        const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
        expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "PaymentRejected", reason, detail: notVerifiedDetail(reason) })
        expect(yield* saleOf(payment)).toStrictEqual(Option.none())
        expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 0 })
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("tells the buyer why verify refused in words: a paused or blacklisting USDC contract is named, not 'did not verify'", () => {
    const cases = [
      ["invalid_exact_evm_transaction_simulation_failed", "the USDC contract refused this transfer"],
      ["invalid_exact_svm_transaction_simulation_failed", "the USDC contract refused this transfer"],
      ["invalid_exact_evm_insufficient_balance", "does not hold enough USDC"],
      ["invalid_exact_evm_payload_authorization_valid_before", "has expired"],
      ["invalid_exact_evm_payload_authorization_valid_after", "not valid yet"],
      ["invalid_exact_evm_nonce_already_used", "already used on chain"],
      ["invalid_exact_evm_signature", "signature does not check out"],
      ["invalid_exact_evm_network_mismatch", "another network"],
      ["invalid_exact_evm_recipient_mismatch", "does not match this checkout's terms"],
      ["invalid_exact_svm_fee_payer_mismatch", "does not match this checkout's terms"],
      ["invalid_exact_svm_fee_payer_not_managed_by_facilitator", "fee payer is not the facilitator's"],
      ["something_new", "the facilitator refused it (something_new)"]
    ] as const
    return Effect.forEach(cases, ([reason, words]) => {
      const { layer } = setup({ test: { verify: () => Effect.succeed({ valid: false, invalidReason: reason, payer: null }) } })
      return Effect.gen(function*() {
        const { checkout } = yield* listed()
        const refused = yield* Effect.flip(pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout))))
        expect(refused).toMatchObject({ _tag: "PaymentRejected", reason })
        expect(refused._tag === "PaymentRejected" && refused.detail).toContain(words)
        expect(refused._tag === "PaymentRejected" && refused.detail).toContain("Nothing was charged.")
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("answers 503 payments unavailable when verify cannot be asked: nothing charged, nothing recorded", () => {
    const { test, layer } = setup({ test: { verify: () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "down" })) } })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const error = yield* Effect.flip(pay(checkout, payment))
      expect(error).toMatchObject({ _tag: "PaymentsUnavailable" })
      expect(error._tag === "PaymentsUnavailable" && error.detail).toContain("could not verify the payment")
      expect(yield* saleOf(payment)).toStrictEqual(Option.none())
      expect(test.calls.settle).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("charges nobody when the code host cannot serve the repo: the commit is pinned before the settle, so a seller's repo gone missing fails before any money moves", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.remove(WIDGET.owner, WIDGET.name))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "HostUnavailable" })
      expect(yield* saleOf(payment)).toStrictEqual(Option.none())
      expect(test.calls.settle).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses live payments (503) when the operator configured no live facilitator, before reading the payment", () => {
    const { test, layer } = setup({ live: null })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const error = yield* Effect.flip(pay(checkout, payment, { livemode: true }))
      expect(error).toMatchObject({ _tag: "PaymentsUnavailable" })
      expect(error._tag === "PaymentsUnavailable" && error.detail).toContain("Live payments are off")
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("pays live money through the live facilitator only, never the test twin", () => {
    const { test, live, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const chains = yield* Chains
      const facts = chains.facts("base", true)
      const requirement = { ...(yield* termsOf(checkout)), livemode: true, network: facts.network, asset: facts.asset, extra: facts.extra }
      const payment = yield* signed(aBuyer(), requirement)
      const goods = yield* pay(checkout, payment, { livemode: true })
      expect(goods.sale).toMatchObject({ livemode: true, network: "eip155:8453", status: "settled" })
      expect(live!.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
      // A test payment is not taken at the live checkout, nor the reverse.
      const testPayment = yield* signed(aBuyer(), yield* termsOf(checkout))
      expect(yield* Effect.flip(pay(checkout, testPayment, { livemode: true }))).toMatchObject({ _tag: "PaymentRejected", reason: "network_mismatch" })
    }).pipe(Effect.provide(layer))
  })
})

/** A push to the widget: another head commit (the earlier one stays readable). */
const PUSHED_SHA = "fedcba9876543210fedcba9876543210fedcba98"
const pushTo = (headSha: string) => Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha }))
/** That push, as an effect needing nothing more: to run inside a stub facilitator. */
const pushLater = (headSha: string) => Effect.map(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha }))

/** The checkout's test 402 now (its offers signed for the head the code host gives now), and a buyer's payment of it. */
const quotedPayment = (checkout: Checkout) =>
  Effect.gen(function*() {
    const quote = yield* Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false))
    return { quote, payment: yield* signed(aBuyer(), quote.requirements[0]!) }
  })

/** The payment echoing `offers` in its `offer-receipt` extension, as an official x402 v2 client sends a 402's offers back. */
const echoing = (payment: SubmittedPayment, offers: ReadonlyArray<string>): SubmittedPayment => ({ ...payment, raw: { extensions: offersExtension(offers) } })

/** A test facilitator whose verify first runs `during.verify` (set by the test, e.g. a push): what happens while a payment is verified. */
const duringVerify = () => {
  const during: { verify: Effect.Effect<void, never, never> } = { verify: Effect.void }
  const answers: Answers = { verify: () => Effect.as(Effect.suspend(() => during.verify), { valid: true, invalidReason: null, payer: null }) }
  return { during, answers }
}

describe("Purchases.quote: the archive its offers name", () => {
  it.effect("a live offer names the commit's archive once cut; a test offer never does (the twin's goods are a manifest made per sale)", () => {
    const digest = { sha256: "ab".repeat(32), size: 42 }
    const { layer } = setup({ wrapHost: (host) => ({ ...host, archiveDigest: () => Effect.succeed(Option.some(digest)) }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const purchases = yield* Purchases
      expect((yield* purchases.quote(checkout.id, true)).pin).toStrictEqual({ commit: SHA, archive: digest })
      expect((yield* purchases.quote(checkout.id, false)).pin).toStrictEqual({ commit: SHA, archive: null })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: the commit its echoed offer names", () => {
  it.effect("refuses (commit_moved, naming the repo and the head now) a payment whose echoed offer names another commit than the head: the seller pushed since the 402; nothing recorded, no facilitator asked", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { quote, payment } = yield* quotedPayment(checkout)
      expect(quote.pin.commit).toBe(SHA)
      yield* pushTo(PUSHED_SHA)
      const moved = echoing(payment, quote.offers)
      const refused = yield* Effect.flip(pay(checkout, moved))
      expect(refused).toMatchObject({ _tag: "PaymentRejected", reason: "commit_moved", detail: commitMovedDetail("Octo-Org/Widget", PUSHED_SHA) })
      expect((refused as PaymentRejected).detail).toContain("Octo-Org/Widget")
      expect((refused as PaymentRejected).detail).toContain(PUSHED_SHA)
      expect(yield* saleOf(moved)).toStrictEqual(Option.none())
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (offer_mismatch) a payment echoing the offer-receipt extension with no readable offer for its network: nothing recorded, no facilitator asked", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { quote, payment } = yield* quotedPayment(checkout)
      for (const offers of [["not.a.jws"], [], quote.offers.map((jws) => jws.split(".").reverse().join("."))]) {
        const garbled = echoing(payment, offers)
        expect(yield* Effect.flip(pay(checkout, garbled))).toMatchObject({ _tag: "PaymentRejected", reason: "offer_mismatch", detail: OFFER_MISMATCH })
        expect(yield* saleOf(garbled)).toStrictEqual(Option.none())
      }
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("sells the head to a payment whose echoed offer names it, in any case (commit ids compare case-insensitively)", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const exact = yield* quotedPayment(checkout)
      expect((yield* pay(checkout, echoing(exact.payment, exact.quote.offers))).sale).toMatchObject({ status: "settled", commitSha: SHA })
      // An offer naming the head in upper case, paid while the host gives it in lower case; then the reverse.
      yield* pushTo(SHA.toUpperCase())
      const upper = yield* quotedPayment(checkout)
      expect(upper.quote.pin.commit).toBe(SHA.toUpperCase())
      yield* pushTo(SHA)
      expect((yield* pay(checkout, echoing(upper.payment, upper.quote.offers))).sale).toMatchObject({ status: "settled", commitSha: SHA })
      const lower = yield* quotedPayment(checkout)
      yield* pushTo(SHA.toUpperCase())
      expect((yield* pay(checkout, echoing(lower.payment, lower.quote.offers))).sale).toMatchObject({ status: "settled", commitSha: SHA.toUpperCase() })
      expect(test.calls).toMatchObject({ verify: 3, settle: 3 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (commit_moved) a payment whose echoed offer names the head the seller pushed over while it was verified: no settle, nothing delivered", () => {
    const { during, answers } = duringVerify()
    const { test, layer } = setup({ test: answers })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { quote, payment } = yield* quotedPayment(checkout)
      during.verify = yield* pushLater(PUSHED_SHA)
      const echoed = echoing(payment, quote.offers)
      expect(yield* Effect.flip(pay(checkout, echoed))).toMatchObject({
        _tag: "PaymentRejected",
        reason: "commit_moved",
        detail: commitMovedDetail("Octo-Org/Widget", PUSHED_SHA)
      })
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 0 })
      expect(yield* saleOf(echoed)).toStrictEqual(Option.none())
    }).pipe(Effect.provide(layer))
  })

  it.effect("sells a payment without an echo (x402 v1) the head read after verify: a push while it was verified is what it receives", () => {
    const { during, answers } = duringVerify()
    const { test, layer } = setup({ test: answers })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { payment } = yield* quotedPayment(checkout)
      expect(payment.raw).toStrictEqual({})
      during.verify = yield* pushLater(PUSHED_SHA)
      const goods = yield* pay(checkout, payment)
      expect(goods.sale).toMatchObject({ status: "settled", commitSha: PUSHED_SHA })
      expect(goods.filename).toBe("Octo-Org-Widget-fedcba9.tar.gz")
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: payments refused before any facilitator is asked", () => {
  it.effect("refuses a payment on a network the checkout does not take, one whose payload cannot be read and one made for other terms, asking no facilitator", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const requirement = yield* termsOf(checkout)
      const good = yield* signed(aBuyer(), requirement)
      expect(yield* Effect.flip(pay(checkout, { ...good, network: "eip155:1" }))).toMatchObject({ _tag: "PaymentRejected", reason: "network_mismatch" })
      expect(yield* Effect.flip(pay(checkout, { ...good, payload: { signature: "0x" } }))).toMatchObject({ _tag: "PaymentRejected", reason: "invalid_payload" })
      const cheaper = yield* signed(aBuyer(), { ...requirement, amount: AtomicAmount.make(requirement.amount - 1n) })
      expect(yield* Effect.flip(pay(checkout, cheaper))).toMatchObject({ _tag: "PaymentRejected", reason: "requirements_mismatch" })
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses an authorization not signed by its payer, and one signed for another price than it claims to accept (a forged payment never reaches the facilitator or the ledger)", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const requirement = yield* termsOf(checkout)
      const buyer = aBuyer()
      const real = yield* signed(buyer, requirement)
      const byAnother = yield* signed(aBuyer(), requirement)
      // The buyer's authorization with another key's signature over it.
      const forged = { ...real, payload: { ...(real.payload as object), signature: (byAnother.payload as { signature: string }).signature } }
      const refused = yield* Effect.flip(pay(checkout, forged))
      expect(refused).toMatchObject({ _tag: "PaymentRejected", reason: "invalid_exact_evm_signature" })
      expect(refused._tag === "PaymentRejected" && refused.detail).toBe("The payment is not validly signed by its payer for this checkout's terms.")
      // Signed for one cent less, claiming the checkout's price.
      const underpaid = yield* signed(buyer, { ...requirement, amount: AtomicAmount.make(requirement.amount - 10_000n) })
      const claimed = { ...underpaid, accepted: real.accepted }
      expect(yield* Effect.flip(pay(checkout, claimed))).toMatchObject({ _tag: "PaymentRejected", reason: "invalid_exact_evm_payload_authorization_value_mismatch" })
      expect(yield* saleOf(forged)).toStrictEqual(Option.none())
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses an authorization that has expired (its validBefore is past): it could never settle", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* TestClock.adjust("10 minutes")
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "PaymentRejected", reason: "invalid_exact_evm_payload_authorization_valid_before" })
      expect(test.calls.verify).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("limits payment attempts to 60 a minute per client address (junk payments cannot hammer the checks), other clients unaffected", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const junk = { ...(yield* signed(aBuyer(), yield* termsOf(checkout))), network: "eip155:1" }
      for (let i = 0; i < 60; i++) expect(yield* Effect.flip(pay(checkout, junk))).toMatchObject({ _tag: "PaymentRejected" })
      const limited = yield* Effect.flip(pay(checkout, junk))
      expect(limited).toMatchObject({ _tag: "RateLimited", detail: "Too many payment attempts from this address; wait and try again." })
      expect(limited._tag === "RateLimited" && limited.retryAfterSeconds).toBeGreaterThan(0)
      expect(yield* Effect.flip(pay(checkout, junk, { client: "198.51.100.9" }))).toMatchObject({ _tag: "PaymentRejected" })
      yield* TestClock.adjust("61 seconds")
      expect(yield* Effect.flip(pay(checkout, junk))).toMatchObject({ _tag: "PaymentRejected" })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: a payment already on the ledger", () => {
  it.effect("never delivers twice for one payment presented again without its buyer's id (every byte of a settled payment is public): 402 payment_already_used, no second settle", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* pay(checkout, payment)
      const again = yield* Effect.flip(pay(checkout, payment))
      expect(again).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers a payment refused earlier with that refusal again at once (the chain asked, no wait for a settle in flight), never a second settle; once the chain shows it spent otherwise, with that failure", () => {
    let onChain: SettlementStatus = { _tag: "Unsettled" }
    const { test, layer } = setup({ test: { settle: (_, r) => Effect.succeed({ success: false, transaction: null, network: r.network, payer: null, errorReason: "insufficient_funds" }), status: () => Effect.succeed(onChain) } })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* Effect.flip(pay(checkout, payment))
      const again = yield* Effect.flip(pay(checkout, payment))
      expect(again).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      expect(again._tag === "SettlementFailed" && again.detail).toContain("It is not sent for settlement again")
      expect(again._tag === "SettlementFailed" && again.detail).toContain("does not hold enough USDC")
      const withTheId = yield* Effect.flip(pay(checkout, withId(payment, "pay_other")))
      expect(withTheId).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      expect(test.calls).toMatchObject({ settle: 1, status: 3 })
      onChain = { _tag: "Failed", reason: AUTHORIZATION_CANCELED }
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({
        _tag: "SettlementFailed",
        reason: AUTHORIZATION_CANCELED,
        detail: "This payment failed to settle earlier; it cannot be used again."
      })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "failed", failureReason: AUTHORIZATION_CANCELED })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers a copy of a payment whose settle is still unknown with 503 after asking the chain, and delivers nothing to a copy without the buyer's id once it settled", () => {
    let chainSays: SettlementStatus = { _tag: "Unknown", reason: "not final" }
    const { test, layer } = setup({
      test: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "no answer" })), status: () => Effect.succeed(chainSays) }
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* Effect.flip(pay(checkout, payment))
      // A second copy waits a few seconds for the settle in flight, then asks the chain.
      const copy = yield* Effect.fork(Effect.flip(pay(checkout, payment)))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(copy)).toMatchObject({ _tag: "SettlementPending" })
      expect(test.calls).toMatchObject({ status: 1, settle: 1 })
      chainSays = { _tag: "Settled", transaction: "0xlanded" }
      const later = yield* Effect.fork(Effect.flip(pay(checkout, payment)))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(later)).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "settled", transaction: "0xlanded" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("delivers again to the buyer's own retry (same payment-identifier id), without a second settle, and stores the id only as a keyed digest", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_0123456789abcdef0123456789abcdef")
      const first = yield* pay(checkout, payment)
      expect(first.sale.paymentIdDigest).toMatch(/^[0-9a-f]{64}$/)
      expect(JSON.stringify(first.sale, (_, v) => typeof v === "bigint" ? `${v}` : v)).not.toContain("pay_0123456789abcdef0123456789abcdef")
      const again = yield* pay(checkout, payment)
      expect(again.sale).toStrictEqual(first.sale)
      expect(again.settlement).toStrictEqual(first.settlement)
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (409) the buyer's id presented at another checkout, or by another payer's payment: an id names one purchase of one payer", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { checkout: other } = yield* listed({ repo: new RepoRef({ owner: GADGET.owner, name: GADGET.name }) })
      const buyer = aBuyer()
      const id = "pay_fedcba9876543210fedcba9876543210"
      yield* pay(checkout, withId(yield* signed(buyer, yield* termsOf(checkout)), id))
      // The same payer, the same id, at another checkout: not that purchase.
      const elsewhere = withId(yield* signed(buyer, yield* termsOf(other)), id)
      expect(yield* Effect.flip(pay(other, elsewhere))).toMatchObject({ _tag: "PaymentIdConflict" })
      // The same payer and id, the same checkout, but a payment for other terms.
      const requirement = yield* termsOf(checkout)
      const otherTerms = withId(yield* signed(buyer, { ...requirement, amount: AtomicAmount.make(requirement.amount + 1n) }), id)
      expect(yield* Effect.flip(pay(checkout, otherTerms))).toMatchObject({ _tag: "PaymentIdConflict" })
      // Another payer with the same id is another purchase altogether.
      const stranger = yield* pay(checkout, withId(yield* signed(aBuyer(), requirement), id))
      expect(stranger.sale.status).toBe("settled")
      expect(test.calls.settle).toBe(2)
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.download: a receipt link gives its settled sale's goods for 7 days, and nothing else", () => {
  const download = (token: string) => Effect.flatMap(Purchases, (p) => p.download(token))
  const tokenOf = (receipt: string) => receipt.slice(`${BASE_URL}/downloads/`.length)

  it.effect("the receipt of a settled purchase gives the same sale's goods; a made-up token, or a well-signed one naming no sale, is 'No such download.'", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const bought = yield* pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout)))
      const again = yield* download(tokenOf(bought.receipt))
      expect(again.sale).toStrictEqual(bought.sale)
      const noSuch = new NotFound({ detail: "No such download." })
      expect(yield* Effect.flip(download("not-a-receipt"))).toStrictEqual(noSuch)
      const box = yield* SecretBox
      expect(yield* Effect.flip(download(receiptToken(SaleId.make("sale_nobody"), box.mac)))).toStrictEqual(noSuch)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a well-signed receipt of a sale still pending is 'No such download.': no goods before the money is known to have moved", () => {
    const { layer } = setup({ test: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "timed out" })) } })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* Effect.flip(pay(checkout, payment))
      const sale = Option.getOrThrow(yield* saleOf(payment))
      expect(sale.status).toBe("pending")
      const box = yield* SecretBox
      expect(yield* Effect.flip(download(receiptToken(sale.id, box.mac)))).toStrictEqual(new NotFound({ detail: "No such download." }))
    }).pipe(Effect.provide(layer))
  })

  it.effect("a receipt is good for 7 days after settlement to the millisecond, then ReceiptExpired naming the repo page", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const bought = yield* pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout)))
      yield* TestClock.adjust(7 * 24 * 60 * 60 * 1000)
      expect((yield* download(tokenOf(bought.receipt))).sale.id).toBe(bought.sale.id)
      yield* TestClock.adjust(1)
      const expired = yield* Effect.flip(download(tokenOf(bought.receipt)))
      expect(expired).toMatchObject({
        _tag: "ReceiptExpired",
        page: `${BASE_URL}/r/Octo-Org/Widget`,
        detail: "This download link has expired (links last 7 days after payment)."
      })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: the buyer's id as stored", () => {
  it.effect("records no payment-identifier digest for a payment sent without an id, and the keyed digest (never the id) for one sent with it", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const without = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* pay(checkout, without)
      // A digest made up for an absent id would let a later payment with that made-up id pass as this purchase's retry.
      expect(Option.map(yield* saleOf(without), (sale) => sale.paymentIdDigest)).toStrictEqual(Option.some(null))
      const id = "pay_0a1b2c3d4e5f60718293a4b5c6d7e8f9"
      const withTheId = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), id)
      yield* pay(checkout, withTheId)
      const digest = Option.getOrThrow(Option.map(yield* saleOf(withTheId), (sale) => sale.paymentIdDigest))
      expect(digest).toMatch(/^[0-9a-f]{64}$/)
      expect(digest).not.toContain(id)
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: copies of a payment racing each other", () => {
  it.effect("settles nothing and unlocks nothing for a copy without the buyer's id that raced past the ledger lookup (the store's one-sale-per-payment decides)", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* pay(checkout, payment)
      miss.byKey = 1
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("gives the buyer's own retry that raced past both lookups the goods of its one sale, without a second settle", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000001")
      const first = yield* pay(checkout, payment)
      Object.assign(miss, { byKey: 1, byId: 1 })
      const again = yield* pay(checkout, payment)
      expect(again.sale).toStrictEqual(first.sale)
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("recognises the buyer's retry found by its payment key after it raced past the id lookup", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000002")
      const first = yield* pay(checkout, payment)
      miss.byId = 1
      expect((yield* pay(checkout, payment)).sale).toStrictEqual(first.sale)
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("never unlocks a settled payment presented with an id it was not made with (its public parts plus a made-up id are no buyer's retry), even by a copy that raced past the ledger lookup", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      yield* pay(checkout, payment)
      const madeUp = withId(payment, "pay_00000000000000000000000000000003")
      expect(yield* Effect.flip(pay(checkout, madeUp))).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      miss.byKey = 1
      expect(yield* Effect.flip(pay(checkout, madeUp))).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("treats a second payment of one payer with one id, recorded at the same moment as the first, as a retry of the first: it is never settled (one purchase per id)", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const buyer = aBuyer()
      const id = "pay_00000000000000000000000000000004"
      const requirement = yield* termsOf(checkout)
      const first = yield* pay(checkout, withId(yield* signed(buyer, requirement), id))
      const second = withId(yield* signed(buyer, requirement), id)
      miss.byId = 1
      expect((yield* pay(checkout, second)).sale).toStrictEqual(first.sale)
      expect(yield* saleOf(second)).toStrictEqual(Option.none())
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (409) such a second payment made at another checkout: the id names the first purchase, not this one", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { checkout: other } = yield* listed({ repo: new RepoRef({ owner: GADGET.owner, name: GADGET.name }) })
      const buyer = aBuyer()
      const id = "pay_00000000000000000000000000000005"
      yield* pay(checkout, withId(yield* signed(buyer, yield* termsOf(checkout)), id))
      const second = withId(yield* signed(buyer, yield* termsOf(other)), id)
      miss.byId = 1
      expect(yield* Effect.flip(pay(other, second))).toMatchObject({ _tag: "PaymentIdConflict" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("lets a storage failure recording the sale through as a defect (nothing settled), with or without an id: it is never mistaken for a replay of the payer's earlier purchase", () => {
    const miss = { byKey: 0, byId: 0, failRecord: 0 }
    const { test, layer } = setup({ wrap: racing(miss) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const buyer = aBuyer()
      const requirement = yield* termsOf(checkout)
      yield* pay(checkout, yield* signed(buyer, requirement))
      for (const payment of [yield* signed(buyer, requirement), withId(yield* signed(buyer, requirement), "pay_00000000000000000000000000000006")]) {
        miss.failRecord = 1
        const exit = yield* Effect.exit(pay(checkout, payment))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toContain("disk full")
        expect(yield* saleOf(payment)).toStrictEqual(Option.none())
      }
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.pay: what the buyer is told, and where it is seen", () => {
  it.effect("explains each refusal: an unknown checkout, a payment on another network (named), a payment for other terms", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      expect(yield* Effect.flip(Effect.flatMap(Purchases, (p) => p.current("chk_nobody")))).toStrictEqual(new NotFound({ detail: "No such checkout." }))
      const requirement = yield* termsOf(checkout)
      const payment = yield* signed(aBuyer(), requirement)
      expect(yield* Effect.flip(pay(checkout, { ...payment, network: "eip155:1" }))).toStrictEqual(
        new PaymentRejected({ reason: "network_mismatch", detail: "This checkout does not take payments on eip155:1." })
      )
      const cheaper = yield* signed(aBuyer(), { ...requirement, amount: AtomicAmount.make(requirement.amount - 1n) })
      expect(yield* Effect.flip(pay(checkout, cheaper))).toStrictEqual(new PaymentRejected({
        reason: "requirements_mismatch",
        detail: "The payment was made for other terms (price, address, asset or network); pay one of the current requirements."
      }))
    }).pipe(Effect.provide(layer))
  })

  it.effect("reads a buyer's id only from a payment it can read on a network of this mode: an id on a foreign network or with an unreadable payload is refused like any such payment", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000007")
      expect(yield* Effect.flip(pay(checkout, { ...payment, network: "eip155:1" }))).toMatchObject({ _tag: "PaymentRejected", reason: "network_mismatch" })
      expect(yield* Effect.flip(pay(checkout, { ...payment, payload: { nonsense: true } }))).toMatchObject({ _tag: "PaymentRejected", reason: "invalid_payload" })
      expect(test.calls.verify).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("gives a Solana sale (whose transaction names no expiry) the requirement's time limit as settleBy: the reconciler can fail it once it can no longer land", () => {
    const { layer } = setup({ test: { settle: (_, r) => Effect.fail(new FacilitatorError({ reason: "timeout", message: `${r.network} no answer` })) } })
    return Effect.gen(function*() {
      const { checkout } = yield* listed({ payTo: { base: null, solana: SOLANA_ADDRESS } })
      const quote = yield* Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false))
      const requirement = quote.requirements[0]!
      expect(requirement).toMatchObject({ chain: "solana", maxTimeoutSeconds: 300 })
      const accepted = { ...requirement, amount: `${requirement.amount}` } as never
      const buyer = yield* Effect.promise(() => generateKeyPairSigner())
      const payload = yield* solanaPayload(buyer, accepted, yield* standardHead(buyer, accepted))
      const { amount, asset, network, payTo } = requirement
      const payment: SubmittedPayment = {
        x402Version: 2,
        scheme: "exact",
        network,
        accepted: Option.some({ scheme: "exact", network, asset, amount: `${amount}`, payTo }),
        payload,
        raw: {}
      }
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementPending" })
      const identity = yield* Effect.flatMap(Chains, (c) => c.paymentIdentity("solana", payload))
      const sale = Option.getOrThrow(yield* Effect.flatMap(SaleLedger, (l) => l.findByPaymentKey(`${network}:${identity.key}`)))
      expect(sale).toMatchObject({ chain: "solana", status: "pending", createdAt: NOW, settleBy: new Date(NOW.getTime() + 300_000) })
    }).pipe(Effect.provide(layer))
  })

  it.effect("runs a purchase in a span named Purchases.pay, reads its checkout in Purchases.current and a retry's goods in Purchases.goods (what an operator's tracer shows)", () => {
    const seen: Record<string, ReadonlyArray<string>> = {}
    const record = (key: string) => Effect.map(spanNames, (names) => void (seen[key] = names))
    const { layer } = setup({
      test: { verify: () => Effect.as(record("verify"), { valid: true, invalidReason: null, payer: null }) },
      wrapStore: (store) => ({
        ...store,
        findCheckoutWithListing: (id) => Effect.zipRight(record("current"), store.findCheckoutWithListing(id)),
        findById: (id) => Effect.zipRight(record("goods"), store.findById(id))
      })
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000030")
      yield* pay(checkout, payment)
      expect(seen["verify"]?.[0]).toBe("Purchases.pay")
      expect(seen["current"]?.slice(0, 3)).toStrictEqual(["Purchases.current", "Purchases.quote", "Purchases.pay"])
      // A retry is answered from the ledger: its goods read the sale's listing.
      yield* pay(checkout, payment)
      expect(seen["goods"]?.slice(0, 2)).toStrictEqual(["Purchases.goods", "Purchases.pay"])
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases.quote: what a checkout offers", () => {
  it.effect("offers nothing (409 not selling) for a listing without a price or a payout wallet, nor for a checkout whose own terms lack one", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const store = yield* ListingStore
      const purchases = yield* Purchases
      const notSelling = (checkout: Checkout, page: string) =>
        Effect.gen(function*() {
          expect(yield* Effect.flip(purchases.quote(checkout.id, false))).toStrictEqual(
            new NotSelling({ page, detail: "This listing is not selling right now (no price or no payout wallet)." })
          )
        })
      const repo = (name: string) => new RepoRef({ owner: WIDGET.owner, name })
      const page = (name: string) => `${BASE_URL}/r/Octo-Org/${name}`
      const { checkout: unpriced } = yield* listed({ repo: repo("A"), price: null })
      yield* notSelling(unpriced, page("A"))
      const { checkout: noWallet } = yield* listed({ repo: repo("B"), payTo: { base: null, solana: null } })
      yield* notSelling(noWallet, page("B"))
      // The checkout is the terms a buyer pays: one that names no price, or no wallet, is not payable.
      const c = yield* listed({ repo: repo("C") })
      yield* store.insertCheckout(new CheckoutClass({ ...c.checkout, price: null }))
      yield* notSelling(c.checkout, page("C"))
      const d = yield* listed({ repo: repo("D") })
      yield* store.insertCheckout(new CheckoutClass({ ...d.checkout, payTo: { base: null, solana: null } }))
      yield* notSelling(d.checkout, page("D"))
      // A listing that stopped selling is not sold at a checkout that still names its old price.
      const e = yield* listed({ repo: repo("E") })
      yield* store.update(new Listing({ ...e.listing, price: null }))
      yield* notSelling(e.checkout, page("E"))
    }).pipe(Effect.provide(layer))
  })

  it.effect("offers each chain the facilitator can serve, at the checkout's absolute URL (live and test), and none it cannot describe", () => {
    const { layer } = setup({ extra: (chain) => chain === "solana" ? null : {} })
    return Effect.gen(function*() {
      const { checkout } = yield* listed({ payTo: { base: BASE_ADDRESS, solana: SOLANA_ADDRESS } })
      const purchases = yield* Purchases
      const testQuote = yield* purchases.quote(checkout.id, false)
      expect(testQuote.resource).toBe(`${BASE_URL}/checkout/${checkout.id}/test`)
      expect(testQuote.requirements.map((r) => [r.chain, r.resource])).toStrictEqual([["base", testQuote.resource]])
      const liveQuote = yield* purchases.quote(checkout.id, true)
      expect(liveQuote.resource).toBe(`${BASE_URL}/checkout/${checkout.id}`)
      expect(liveQuote.requirements.map((r) => r.network)).toStrictEqual(["eip155:8453"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers 503 when the facilitator can describe none of the checkout's chains: nothing could be paid", () => {
    const { layer } = setup({ extra: () => null })
    return Effect.gen(function*() {
      const { checkout } = yield* listed({ payTo: { base: BASE_ADDRESS, solana: SOLANA_ADDRESS } })
      expect(yield* Effect.flip(Effect.flatMap(Purchases, (p) => p.quote(checkout.id, false)))).toStrictEqual(new PaymentsUnavailable({
        detail: "The payment facilitator could not describe its payment options; nothing was charged by this request. Try again shortly."
      }))
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases: the goods", () => {
  const PRIVATE = { ...WIDGET, name: "Secret", isPrivate: true, token: "ghp_seller_token" }

  it.effect("reads a private repo with the seller's sealed token, for a test purchase's manifest and a live purchase's archive", () => {
    const { layer } = setup({ repos: [WIDGET, PRIVATE] })
    return Effect.gen(function*() {
      const box = yield* SecretBox
      const base = aListing({ repo: new RepoRef({ owner: PRIVATE.owner, name: PRIVATE.name }), isPrivate: true })
      const hostPat = yield* box.seal(Redacted.make(PRIVATE.token), hostPatAad(base))
      const { checkout } = yield* listed({ id: base.id, repo: base.repo, isPrivate: true, hostPat, checkoutId: base.checkoutId })
      const goods = yield* pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout)))
      const manifest = gunzipSync(yield* bytesOf(goods.body)).toString("utf8")
      expect(manifest).toContain("Octo-Org-Secret-89abcde/MANIFEST.json")
      expect(manifest).toContain("src/index.ts")
      const facts = (yield* Chains).facts("base", true)
      const requirement = { ...(yield* termsOf(checkout)), livemode: true, network: facts.network, asset: facts.asset, extra: facts.extra }
      const live = yield* pay(checkout, yield* signed(aBuyer(), requirement), { livemode: true })
      expect((yield* bytesOf(live.body)).toString("utf8")).toContain("89abcde src/index.ts\nexport {}")
    }).pipe(Effect.provide(layer))
  })

  it.effect("packs a test purchase under <owner>-<repo>-<7 hex of the commit>/, a manifest and a note, never a file of the repo", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const goods = yield* pay(checkout, yield* signed(aBuyer(), yield* termsOf(checkout)))
      const tar = gunzipSync(yield* bytesOf(goods.body)).toString("utf8")
      expect(tar).toContain("Octo-Org-Widget-89abcde/MANIFEST.json")
      expect(tar).toContain("Octo-Org-Widget-89abcde/NOTE.txt")
      expect(tar).not.toContain(`Octo-Org-Widget-${SHA}`)
      expect(tar).not.toContain("export {}")
    }).pipe(Effect.provide(layer))
  })

  it.effect("delivers a retry the commit it paid for, not the repo's head of today", () => {
    const trees: Array<string> = []
    const { layer } = setup({ wrapHost: (host) => ({ ...host, tree: (repo, token) => Effect.zipRight(Effect.sync(() => trees.push(repo.headSha)), host.tree(repo, token)) }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000010")
      yield* bytesOf((yield* pay(checkout, payment)).body)
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha: "fedcba9876543210fedcba9876543210fedcba98" }))
      const again = yield* pay(checkout, payment)
      expect(again.filename).toBe("Octo-Org-Widget-89abcde.tar.gz")
      expect(gunzipSync(yield* bytesOf(again.body)).toString("utf8")).toContain(`"commit": "${SHA}"`)
      // The tree the manifest lists is asked for at the pinned commit, both times.
      expect(trees).toStrictEqual([SHA, SHA])
    }).pipe(Effect.provide(layer))
  })

  it.effect("delivers a retry from the sale's own repo and commit when its listing can no longer be read (test and live)", () => {
    let hidden = false
    const { layer } = setup({ wrapStore: (store) => ({ ...store, findById: (id) => hidden ? Effect.succeedNone : store.findById(id) }) })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const testPayment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000011")
      yield* pay(checkout, testPayment)
      const facts = (yield* Chains).facts("base", true)
      const liveRequirement = { ...(yield* termsOf(checkout)), livemode: true, network: facts.network, asset: facts.asset, extra: facts.extra }
      const livePayment = withId(yield* signed(aBuyer(), liveRequirement), "pay_00000000000000000000000000000012")
      yield* pay(checkout, livePayment, { livemode: true })
      hidden = true
      const testGoods = yield* pay(checkout, testPayment)
      expect(gunzipSync(yield* bytesOf(testGoods.body)).toString("utf8")).toContain("Octo-Org-Widget-89abcde/MANIFEST.json")
      const liveGoods = yield* pay(checkout, livePayment, { livemode: true })
      expect((yield* bytesOf(liveGoods.body)).toString("utf8")).toContain("89abcde README.md")
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases: a payment whose settle is in flight or unknown", () => {
  it.effect("gives a copy that arrives during the settle the outcome once it lands, without asking the chain", () => {
    const reads = { byId: 0 }
    const gate = Effect.runSync(Deferred.make<void>())
    const { test, layer } = setup({
      test: { settle: (_, r) => Effect.as(Deferred.await(gate), { success: true, transaction: "0xslow", network: r.network, payer: null, errorReason: null }) },
      wrap: (ledger) => ({ ...ledger, findById: (id) => Effect.suspend(() => (reads.byId++, ledger.findById(id))) })
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const first = yield* Effect.fork(pay(checkout, payment))
      for (let i = 0; i < 500 && test.calls.settle === 0; i++) yield* realWait()
      const copy = yield* Effect.fork(Effect.flip(pay(checkout, payment)))
      // The copy found the sale pending and waits for it.
      for (let i = 0; i < 500 && reads.byId === 0; i++) yield* realWait()
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(first)).sale.transaction).toBe("0xslow")
      // It looks again every 100 ms: within a few of them it has the answer (not after its whole 5 s wait).
      for (let i = 0; i < 3 && Option.isNone(yield* Fiber.poll(copy)); i++) {
        yield* realWait()
        yield* TestClock.adjust("100 millis")
      }
      expect(Option.isSome(yield* Fiber.poll(copy))).toBe(true)
      expect(yield* Fiber.join(copy)).toMatchObject({ _tag: "PaymentRejected", reason: "payment_already_used" })
      expect(test.calls).toStrictEqual({ status: 0, verify: 1, settle: 1 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("gives the buyer's retry (with its id) the goods once the chain shows the payment settled, and 503 with what to do while it cannot tell", () => {
    let chainSays: SettlementStatus = { _tag: "Unknown", reason: "no answer" }
    const { test, layer } = setup({
      test: { settle: () => Effect.fail(new FacilitatorError({ reason: "timeout", message: "no answer" })), status: () => Effect.succeed(chainSays) }
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000013")
      yield* Effect.flip(pay(checkout, payment))
      const waiting = yield* runToEnd(yield* Effect.fork(Effect.flip(pay(checkout, payment))))
      expect(waiting).toStrictEqual(new SettlementPending({
        retryAfterSeconds: 10,
        detail: "The payment was sent for settlement but its outcome is not known yet, so it may have been charged. It is recorded and will not be charged twice: retry shortly with the same payment (and its payment-identifier) to receive the goods once it settles."
      }))
      chainSays = { _tag: "Settled", transaction: "0xlanded" }
      const goods = yield* runToEnd(yield* Effect.fork(pay(checkout, payment)))
      expect(goods.sale).toMatchObject({ status: "settled", transaction: "0xlanded" })
      expect(goods.settlement).toMatchObject({ success: true, transaction: "0xlanded" })
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers the buyer's retry (with its id) of a failed payment with that failure, never goods", () => {
    const { layer } = setup({
      test: { settle: (_, r) => Effect.succeed({ success: false, transaction: null, network: r.network, payer: null, errorReason: "insufficient_funds" }), status: () => Effect.succeed({ _tag: "Unsettled" }) }
    })
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), "pay_00000000000000000000000000000014")
      yield* Effect.flip(pay(checkout, payment))
      const again = yield* Effect.flip(pay(checkout, payment))
      expect(again).toMatchObject({ _tag: "SettlementFailed", reason: "insufficient_funds" })
      expect(again._tag === "SettlementFailed" && again.detail).toContain("retrying it with its payment-identifier id gets the goods")
      // Its authorization expired with nothing moved: failed for good, with the facilitator's reason.
      yield* TestClock.setTime(NOW.getTime() + 600_000 + 60_001)
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({
        _tag: "SettlementFailed",
        reason: "insufficient_funds",
        detail: "This payment failed to settle earlier; it cannot be used again."
      })
      expect(Option.getOrThrow(yield* saleOf(payment))).toMatchObject({ status: "failed", failureReason: "insufficient_funds" })
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases: the buyer's payment-identifier id", () => {
  const CONFLICT = new PaymentIdConflict({
    detail: "This payment-identifier id names another purchase of this payer, and this payment is not that purchase's (other terms, another checkout, or not validly signed by the payer). To retry that purchase send the same payment (or a new one signed by the same payer for the same terms at the same checkout) with the id; for a new purchase use a new id."
  })

  it.effect("keeps two ids of one payer apart: two purchases with two ids are two purchases", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const { checkout: other } = yield* listed({ repo: new RepoRef({ owner: GADGET.owner, name: GADGET.name }) })
      const buyer = aBuyer()
      const first = yield* pay(checkout, withId(yield* signed(buyer, yield* termsOf(checkout)), "pay_00000000000000000000000000000020"))
      const second = yield* pay(other, withId(yield* signed(buyer, yield* termsOf(other)), "pay_00000000000000000000000000000021"))
      expect(second.sale.id).not.toBe(first.sale.id)
      expect(second.sale.paymentIdDigest).not.toBe(first.sale.paymentIdDigest)
      expect(test.calls.settle).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (409) a retry with the buyer's id that claims other terms than the sale's, even when its authorization is for the sale's", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const id = "pay_00000000000000000000000000000022"
      const payment = withId(yield* signed(aBuyer(), yield* termsOf(checkout)), id)
      yield* pay(checkout, payment)
      const claimed = Option.map(payment.accepted, (a) => ({ ...a, amount: `${BigInt(a.amount) + 1n}` }))
      expect(yield* Effect.flip(pay(checkout, { ...payment, accepted: claimed }))).toStrictEqual(CONFLICT)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses (409) a retry with the buyer's id whose authorization is not signed by the payer (someone who learnt the id cannot collect the goods)", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const requirement = yield* termsOf(checkout)
      const id = "pay_00000000000000000000000000000023"
      const payment = withId(yield* signed(aBuyer(), requirement), id)
      yield* pay(checkout, payment)
      const other = yield* signed(aBuyer(), requirement)
      const forged = { ...payment, payload: { ...(payment.payload as object), signature: (other.payload as { signature: string }).signature } }
      expect(yield* Effect.flip(pay(checkout, forged))).toStrictEqual(CONFLICT)
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers the buyer's retry with its id even after the seller repriced (the checkout it paid at is no longer current), on Base and on Solana", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const store = yield* ListingStore
      const { checkout: baseCheckout } = yield* listed()
      const basePayment = withId(yield* signed(aBuyer(), yield* termsOf(baseCheckout)), "pay_00000000000000000000000000000024")
      const baseGoods = yield* pay(baseCheckout, basePayment)

      const { checkout: solCheckout } = yield* listed({ repo: new RepoRef({ owner: GADGET.owner, name: GADGET.name }), payTo: { base: null, solana: SOLANA_ADDRESS } })
      const requirement = (yield* Effect.flatMap(Purchases, (p) => p.quote(solCheckout.id, false))).requirements[0]!
      const accepted = { ...requirement, amount: `${requirement.amount}` } as never
      const buyer = yield* Effect.promise(() => generateKeyPairSigner())
      const { amount, asset, network, payTo } = requirement
      const solPayment = withId({
        x402Version: 2,
        scheme: "exact",
        network,
        accepted: Option.some({ scheme: "exact", network, asset, amount: `${amount}`, payTo }),
        payload: yield* solanaPayload(buyer, accepted, yield* standardHead(buyer, accepted)),
        raw: {}
      }, "pay_00000000000000000000000000000025")
      const solGoods = yield* pay(solCheckout, solPayment)

      yield* store.voidCheckout(baseCheckout.id, NOW)
      yield* store.voidCheckout(solCheckout.id, NOW)
      expect((yield* pay(baseCheckout, basePayment)).sale).toStrictEqual(baseGoods.sale)
      expect((yield* pay(solCheckout, solPayment)).sale).toStrictEqual(solGoods.sale)
      expect(test.calls.settle).toBe(2)
    }).pipe(Effect.provide(layer))
  })
})

describe("Purchases: sales recorded before every field was kept", () => {
  it.effect("packs goods of a sale that names no commit as <repo>-unknown, from the repo's current tree", () => {
    const trees: Array<string> = []
    const { layer } = setup({ wrapHost: (host) => ({ ...host, tree: (repo, token) => Effect.zipRight(Effect.sync(() => trees.push(repo.headSha)), host.tree(repo, token)) }) })
    return Effect.gen(function*() {
      const { listing } = yield* listed()
      const sale = aSaleFixture({ listingId: listing.id, repo: "Octo-Org/Widget", livemode: false, commitSha: null, status: "settled", transaction: "0xold" })
      const goods = yield* Effect.flatMap(Purchases, (p) => p.goods(sale, { success: true, transaction: "0xold", network: sale.network, payer: sale.payer, errorReason: null }))
      expect(goods.filename).toBe("Octo-Org-Widget-unknown.tar.gz")
      expect(gunzipSync(yield* bytesOf(goods.body)).toString("utf8")).toContain("Octo-Org-Widget-unknown/MANIFEST.json")
      expect(trees).toStrictEqual([SHA])
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers a payment whose failed sale names no reason with settlement_failed", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { listing, checkout } = yield* listed()
      const payment = yield* signed(aBuyer(), yield* termsOf(checkout))
      const identity = yield* Effect.flatMap(Chains, (c) => c.paymentIdentity("base", payment.payload))
      yield* Effect.flatMap(SaleLedger, (l) =>
        l.recordPending(aSaleFixture({
          paymentKey: `${payment.network}:${identity.key}`,
          listingId: listing.id,
          checkoutId: checkout.id,
          livemode: false,
          network: payment.network,
          payer: identity.payer,
          status: "failed",
          failureReason: null
        })))
      expect(yield* Effect.flip(pay(checkout, payment))).toMatchObject({ _tag: "SettlementFailed", reason: "settlement_failed" })
      expect(test.calls).toStrictEqual({ status: 0, verify: 0, settle: 0 })
    }).pipe(Effect.provide(layer))
  })

  it.effect("retries an x402 v1 payment (which names no accepted terms) carrying the buyer's id on its signature alone", () => {
    const { test, layer } = setup()
    return Effect.gen(function*() {
      const { checkout } = yield* listed()
      const v2 = yield* signed(aBuyer(), yield* termsOf(checkout))
      const v1: SubmittedPayment = { ...v2, x402Version: 1, accepted: Option.none(), paymentId: Redacted.make("pay_00000000000000000000000000000031") }
      const first = yield* pay(checkout, v1)
      expect((yield* pay(checkout, v1)).sale).toStrictEqual(first.sale)
      expect(test.calls.settle).toBe(1)
    }).pipe(Effect.provide(layer))
  })
})

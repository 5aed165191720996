/*
 * Cutting a commit's archive ahead of its delivery (usecases/ArchiveCuts.ts), as the Purchases
 * service uses it: a live 402 offer (`quote`) names the digest of the commit's archive, cutting it first when
 * none was and waiting `OFFER_CUT_WAIT` at most; a live delivery (`download` by receipt token, `deliverLatest`)
 * names it too, cutting first when needed. One cut per commit runs at a time; at most `MAX_OFFER_CUTS` offers'
 * cuts run at once; a failed cut is not tried again by offers for `OFFER_CUT_RETRY` (a delivery does); an
 * archive the adapter does not keep (`cut` answering none) streams straight from the code host, never cut again.
 * On memory adapters, the memory code host decorated to count its `cut` calls, hold them on a Deferred, fail
 * them or answer none; live sales are seeded settled in the memory ledger; time moves with the TestClock.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Duration, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import type { Checkout } from "../../model/Checkout.js"
import { RepoRef } from "../../model/Ids.js"
import type { Listing } from "../../model/Listing.js"
import { type ArchiveDigest, parseJws, type ReceiptClaims } from "../../model/ReceiptClaims.js"
import { receiptToken } from "../../model/rules/Receipt.js"
import { Sale } from "../../model/Sale.js"
import { CodeHost, CodeHostError } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { aCheckout, aListing, aSale } from "../../testing/Fixtures.js"
import { Listings } from "../../usecases/Listings.js"
import { type Goods, Purchases } from "../../usecases/Purchases.js"
import { MAX_OFFER_CUTS, OFFER_CUT_RETRY, OFFER_CUT_WAIT } from "../../usecases/ArchiveCuts.js"
import { Settlements } from "../../usecases/Settlements.js"
import { Storefront } from "../../usecases/Storefront.js"
import { atNow, brief, NOW, portsOf, SHA, WIDGET } from "./memoryApp.js"
import { facilitatorLayer, stubFacilitator } from "./support.js"

type Host = CodeHost["Type"]

const WIDGET_REF = new RepoRef({ owner: WIDGET.owner, name: WIDGET.name })
/** Commits the seller pushes (each its own archive). */
const C2 = "2222222222222222222222222222222222222222"
const C3 = "3333333333333333333333333333333333333333"
const C4 = "4444444444444444444444444444444444444444"
const C5 = "5555555555555555555555555555555555555555"
const C6 = "6666666666666666666666666666666666666666"
const C7 = "7777777777777777777777777777777777777777"
/** The memory host's archive of the widget at SHA: one line per file, headed by the commit's 7 first digits. */
const WIDGET_ARCHIVE = `${SHA.slice(0, 7)} README.md\n# Widget\n\n`
const UNAVAILABLE = new CodeHostError({ reason: "unavailable", message: "The code host did not answer the archive." })
/** What an adapter with a shared quota answers a cut (ahead of any sale) under its reserve. */
const RESERVED = new CodeHostError({ reason: "quota_reserved", message: "The quota is kept for previews and purchases.", retryAfterSeconds: 600 })

/**
 * How the decorated code host answers `cut`: every call is recorded (as `owner/name@sha`); a commit with a gate
 * waits for it (a gate failed fails the cut); then `answer` says what the cut does: the memory host's own cut
 * (`cut`), none (the adapter does not keep that archive), the code host's failure (`fail`), or a digest the host
 * does not remember afterwards (`forgetful`: as an adapter whose kept archive was dropped at once).
 */
interface Script {
  readonly cuts: Array<string>
  readonly gates: Map<string, Deferred.Deferred<void, CodeHostError>>
  answer: "cut" | "none" | "fail" | "forgetful" | "reserved"
}

const FORGOTTEN: ArchiveDigest = { sha256: "f0".repeat(32), size: 7 }

/** Purchases (and the repo page, which shares its cuts) over memoryApp's ports (the widget, the gadget, the secret), with a live and a test facilitator and the scripted cut. */
const setup = () => {
  const script: Script = { cuts: [], gates: new Map(), answer: "cut" }
  const wrapHost = (host: Host): Host => ({
    ...host,
    cut: (ref, commitSha, token) =>
      Effect.suspend(() => {
        script.cuts.push(`${ref.owner}/${ref.name}@${commitSha}`)
        const gate = script.gates.get(commitSha)
        return Effect.zipRight(
          gate === undefined ? Effect.void : Deferred.await(gate),
          Effect.suspend(() => {
            switch (script.answer) {
              case "none":
                return Effect.succeed(Option.none<ArchiveDigest>())
              case "fail":
                return Effect.fail(UNAVAILABLE)
              case "reserved":
                return Effect.fail(RESERVED)
              case "forgetful":
                return Effect.succeed(Option.some(FORGOTTEN))
              default:
                return host.cut(ref, commitSha, token)
            }
          })
        )
      })
  })
  const overrides = facilitatorLayer({ live: Option.some(stubFacilitator()), test: stubFacilitator() }).pipe(
    Layer.provideMerge(portsOf({ wrapHost }))
  )
  const layer = Layer.merge(Purchases.Default, Storefront.Default).pipe(
    Layer.provideMerge(Listings.Default),
    Layer.provideMerge(Settlements.Default),
    Layer.provideMerge(overrides)
  )
  return { script, layer }
}

/** Runs a test's body on its own app (the clock at NOW), with its script. */
const run = <A, E>(body: (script: Script) => Effect.Effect<A, E, any>) => {
  const { script, layer } = setup()
  return Effect.provide(Effect.zipRight(atNow, body(script)), layer) as Effect.Effect<A, E>
}

/** Holds the cuts of `commitSha` until the gate is opened (or failed). */
const hold = (script: Script, commitSha: string) =>
  Effect.tap(Deferred.make<void, CodeHostError>(), (gate) => Effect.sync(() => script.gates.set(commitSha, gate)))
const open = (gate: Deferred.Deferred<void, CodeHostError>) => Deferred.succeed(gate, undefined)

/** The widget listed (anonymously, Base payout) and its current checkout, stored. */
const listedWidget = Effect.gen(function*() {
  const store = yield* ListingStore
  const listing = aListing({ repo: WIDGET_REF, hostPat: null })
  const checkout = aCheckout(listing)
  yield* store.insert(listing)
  yield* store.insertCheckout(checkout)
  return { listing, checkout }
})

/** A live sale of `commitSha` of the listing, settled at NOW in the memory ledger, and its receipt token. */
const soldLive = (
  { listing, checkout }: { readonly listing: Listing; readonly checkout: Checkout },
  commitSha = SHA,
  fields: Partial<ConstructorParameters<typeof Sale>[0]> = {}
) =>
  Effect.gen(function*() {
    const pending = aSale({
      listingId: listing.id,
      checkoutId: checkout.id,
      accountId: null,
      repo: "Octo-Org/Widget",
      livemode: true,
      network: "eip155:8453",
      commitSha,
      createdAt: NOW,
      updatesDays: 30,
      ...fields
    })
    const ledger = yield* SaleLedger
    yield* ledger.recordPending(pending)
    const sale = new Sale({ ...pending, status: "settled", transaction: "0xsettled", settledAt: NOW })
    yield* ledger.settle(sale, Option.none())
    const box = yield* SecretBox
    return { sale, token: receiptToken(sale.id, box.mac) }
  })

/** The seller pushes `headSha`. */
const push = (headSha: string) => Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...WIDGET, headSha }))

const quote = (checkout: Checkout, livemode = true) => Effect.flatMap(Purchases, (p) => p.quote(checkout.id, livemode))
/** The archive a quote's pin names. */
const archiveOf = (q: { readonly pin: { readonly archive: ArchiveDigest | null } }) => q.pin.archive
const download = (token: string) => Effect.flatMap(Purchases, (p) => p.download(token))
/** What the memory host knows of a commit's archive now. */
const known = (commitSha: string, ref = WIDGET_REF) => Effect.flatMap(CodeHost, (h) => h.archiveDigest(ref, commitSha))

/** The claims of a signed receipt. */
const claimsOf = (signed: string | null): ReceiptClaims => {
  expect(signed).not.toBeNull()
  return parseJws(signed!)!.payload as ReceiptClaims
}
/** The bytes of a goods body. */
const bytesOf = (body: Goods["body"]) =>
  Effect.map(Stream.runCollect(Stream.orDie(body)), (chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks)))
const digestOfBytes = (bytes: Buffer): ArchiveDigest => ({ sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length })

/** Lets the other fibers run until `done` holds (all of it is in memory: a few turns do), failing the test if it never does. */
const until = (done: Effect.Effect<boolean, never, any>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !(yield* done); i++) yield* Effect.yieldNow()
    expect(yield* done).toBe(true)
  })
/** Lets the other fibers run a while: to check something does not happen. */
const aWhile = Effect.repeatN(Effect.yieldNow(), 200)
/** How many sleeps (offers waiting for a cut) the TestClock holds. */
const sleeping = (n: number) => Effect.map(TestClock.sleeps(), (s) => Chunk.size(s) === n)
const isRunning = <A, E>(fiber: Fiber.Fiber<A, E>) => Effect.map(Fiber.poll(fiber), Option.isNone)

describe("Purchases.quote: a live offer names its commit's archive, cut first", () => {
  it.effect("a live offer of a commit nobody bought cuts its archive and names its digest: the host's after the cut, and the bytes later delivered; a test offer names none and cuts nothing", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const testQuote = yield* quote(widget.checkout, false)
        expect(testQuote.pin).toStrictEqual({ commit: SHA, archive: null })
        expect(script.cuts).toStrictEqual([])
        expect(yield* known(SHA)).toStrictEqual(Option.none())

        const live = yield* quote(widget.checkout)
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${SHA}`])
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(live.pin).toStrictEqual({ commit: SHA, archive: digest })
        // The signed offer names it too.
        expect(parseJws(live.offers[0]!)!.payload).toMatchObject({ commit: SHA, archive: digest })

        const { token } = yield* soldLive(widget)
        const goods = yield* download(token)
        expect(goods.digest).toStrictEqual(digest)
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: digest, livemode: true })
        const bytes = yield* bytesOf(goods.body)
        expect(bytes.toString("utf8")).toBe(WIDGET_ARCHIVE)
        expect(digestOfBytes(bytes)).toStrictEqual(digest)
        // Known now: neither the delivery nor a later offer cut it again.
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(1)
      })))

  it.effect("a cut slower than OFFER_CUT_WAIT: the offer answers without a digest once the clock passes it, the cut goes on, and the next offer names its digest without cutting again", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(OFFER_CUT_WAIT).toStrictEqual(Duration.seconds(1))
        const widget = yield* listedWidget
        const gate = yield* hold(script, SHA)
        const fiber = yield* Effect.fork(quote(widget.checkout))
        yield* until(Effect.map(sleeping(1), (s) => s && script.cuts.length === 1))
        yield* TestClock.adjust(999)
        yield* aWhile
        expect(yield* isRunning(fiber)).toBe(true)
        yield* TestClock.adjust(1)
        expect(archiveOf(yield* Fiber.join(fiber))).toBeNull()
        expect(yield* known(SHA)).toStrictEqual(Option.none())

        // The cut was not interrupted with the offer: once the host answers, its digest is known.
        yield* open(gate)
        yield* until(Effect.map(known(SHA), Option.isSome))
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(1)
      })))

  it.effect("concurrent offers of one commit share one cut, and all name its digest", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const gate = yield* hold(script, SHA)
        const fiber = yield* Effect.fork(Effect.all([quote(widget.checkout), quote(widget.checkout), quote(widget.checkout)], { concurrency: "unbounded" }))
        // All three wait for the cut (each its OFFER_CUT_WAIT).
        yield* until(sleeping(3))
        expect(script.cuts).toHaveLength(1)
        yield* open(gate)
        const quotes = yield* Fiber.join(fiber)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(quotes.map(archiveOf)).toStrictEqual([digest, digest, digest])
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${SHA}`])
      })))

  it.effect("an offer of a commit whose cut is running (started by a delivery) joins it: no second cut, and it names the digest", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        const gate = yield* hold(script, SHA)
        const delivery = yield* Effect.fork(download(token))
        yield* until(Effect.sync(() => script.cuts.length === 1))
        const offer = yield* Effect.fork(quote(widget.checkout))
        yield* until(sleeping(1))
        yield* open(gate)
        const offered = yield* Fiber.join(offer)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(archiveOf(offered)).toStrictEqual(digest)
        expect((yield* Fiber.join(delivery)).digest).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(1)
      })))
})

describe("Storefront.repoPage: the page of a listing for sale shares the offers' cuts", () => {
  it.effect("a repo page viewed while an offer's cut of its head runs waits for that cut (one per app): one cut, the same digest", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const gate = yield* hold(script, SHA)
        const offer = yield* Effect.fork(quote(widget.checkout))
        yield* until(Effect.map(sleeping(1), (s) => s && script.cuts.length === 1))
        const page = yield* Effect.fork(Effect.flatMap(Storefront, (s) => s.repoPage(WIDGET.owner, WIDGET.name)))
        yield* until(sleeping(2))
        yield* open(gate)
        const offered = yield* Fiber.join(offer)
        const viewed = yield* Fiber.join(page)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(archiveOf(offered)).toStrictEqual(digest)
        expect(viewed.preview?.archive).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(1)
      })))
})

describe("Purchases.quote: at most MAX_OFFER_CUTS offers' cuts at once", () => {
  /** Offers of SHA, C2, C3 and C4 (pushed one after the other), each cut held open; their gates, and the offers' fibers. */
  const fourHeld = (script: Script, checkout: Checkout) =>
    Effect.gen(function*() {
      const held: Array<{ gate: Deferred.Deferred<void, CodeHostError>; offer: Fiber.RuntimeFiber<{ readonly pin: { readonly archive: ArchiveDigest | null } }, unknown> }> = []
      for (const [i, sha] of [SHA, C2, C3, C4].entries()) {
        if (sha !== SHA) yield* push(sha)
        const gate = yield* hold(script, sha)
        const offer = yield* Effect.fork(quote(checkout))
        // This offer's cut started (so it has read the head) before the next push.
        yield* until(Effect.sync(() => script.cuts.length === i + 1))
        held.push({ gate, offer })
      }
      yield* until(sleeping(4))
      return held
    })

  it.effect("with 4 offers' cuts running, an offer of a fifth commit names none and starts no cut; once one ends, the next offer of it cuts", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(MAX_OFFER_CUTS).toBe(4)
        const widget = yield* listedWidget
        const held = yield* fourHeld(script, widget.checkout)
        expect(script.cuts).toStrictEqual([SHA, C2, C3, C4].map((sha) => `Octo-Org/Widget@${sha}`))
        yield* push(C5)
        // C5 is not held: a cut of it would end at once, and the offer would name its digest.
        const fifth = yield* quote(widget.checkout)
        expect(fifth.pin).toStrictEqual({ commit: C5, archive: null })
        expect(script.cuts).toHaveLength(4)

        // One ends: its offer names it, and the slot is free again.
        yield* open(held[1]!.gate)
        expect(archiveOf(yield* Fiber.join(held[1]!.offer))).toStrictEqual(Option.getOrThrow(yield* known(C2)))
        const again = yield* quote(widget.checkout)
        expect(script.cuts).toHaveLength(5)
        expect(script.cuts[4]).toBe(`Octo-Org/Widget@${C5}`)
        expect(again.pin).toStrictEqual({ commit: C5, archive: Option.getOrThrow(yield* known(C5)) })
        for (const { gate } of held) yield* open(gate)
      })))

  it.effect("a cut that fails frees its slot too", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const held = yield* fourHeld(script, widget.checkout)
        yield* push(C5)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(4)
        yield* Deferred.fail(held[0]!.gate, UNAVAILABLE)
        expect(archiveOf(yield* Fiber.join(held[0]!.offer))).toBeNull()
        const again = yield* quote(widget.checkout)
        expect(script.cuts).toHaveLength(5)
        expect(again.pin.archive).toStrictEqual(Option.getOrThrow(yield* known(C5)))
        for (const { gate } of held) yield* open(gate)
      })))

  it.effect("at the limit, an offer of a commit whose cut is running still joins that cut and names its digest", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const held = yield* fourHeld(script, widget.checkout)
        // The head is C4, whose cut is one of the four.
        const joining = yield* Effect.fork(quote(widget.checkout))
        yield* until(sleeping(5))
        yield* open(held[3]!.gate)
        const joined = yield* Fiber.join(joining)
        expect(joined.pin).toStrictEqual({ commit: C4, archive: Option.getOrThrow(yield* known(C4)) })
        expect(script.cuts).toHaveLength(4)
        for (const { gate } of held) yield* open(gate)
      })))

  it.effect("a paid delivery cuts even at the limit, and a delivery's cut does not count among the offers'", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const held = yield* fourHeld(script, widget.checkout)
        // At the limit: the delivery of a fifth commit cuts it.
        yield* push(C5)
        const { token } = yield* soldLive(widget, C5)
        const goods = yield* download(token)
        expect(script.cuts).toHaveLength(5)
        expect(goods.digest).toStrictEqual(Option.getOrThrow(yield* known(C5)))

        // Its cut ended without freeing an offer's slot: an offer of another commit still names none.
        yield* push(C7)
        expect((yield* quote(widget.checkout)).pin).toStrictEqual({ commit: C7, archive: null })
        expect(script.cuts).toHaveLength(5)

        // Three offers' cuts and a delivery's running: the offer of C7 cuts now.
        yield* open(held[0]!.gate)
        yield* Fiber.join(held[0]!.offer)
        yield* push(C6)
        yield* push(C7)
        const delivering = yield* hold(script, C6)
        const { token: c6Token } = yield* soldLive(widget, C6)
        const delivery = yield* Effect.fork(download(c6Token))
        yield* until(Effect.sync(() => script.cuts.length === 6))
        const offered = yield* quote(widget.checkout)
        expect(script.cuts).toHaveLength(7)
        expect(offered.pin).toStrictEqual({ commit: C7, archive: Option.getOrThrow(yield* known(C7)) })
        yield* open(delivering)
        expect((yield* Fiber.join(delivery)).digest).toStrictEqual(Option.getOrThrow(yield* known(C6)))
        for (const { gate } of held) yield* open(gate)
      })))
})

describe("Purchases.quote: a failed cut", () => {
  it.effect("the offer names none; offers within OFFER_CUT_RETRY do not cut again; from then on, an offer cuts again", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(OFFER_CUT_RETRY).toStrictEqual(Duration.minutes(1))
        const widget = yield* listedWidget
        script.answer = "fail"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        yield* TestClock.adjust(Duration.toMillis(OFFER_CUT_RETRY) - 1)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)
        yield* TestClock.adjust(1)
        // It fails again: offers leave it alone for another minute.
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(2)
        script.answer = "cut"
        yield* TestClock.adjust(Duration.toMillis(OFFER_CUT_RETRY) - 1)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(2)
        yield* TestClock.adjust(1)
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(Option.getOrThrow(yield* known(SHA)))
        expect(script.cuts).toHaveLength(3)
      })))

  it.effect("a failed cut of one commit leaves the offers of another alone, and is remembered while others fail or are not kept", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        script.answer = "fail"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        script.answer = "cut"
        yield* push(C2)
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(Option.getOrThrow(yield* known(C2)))
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${SHA}`, `Octo-Org/Widget@${C2}`])
        // Nor does another commit's failure, or another archive not kept, make the first one forgotten.
        script.answer = "fail"
        yield* push(C3)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        script.answer = "none"
        yield* push(C4)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(4)
        script.answer = "cut"
        yield* push(SHA)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(4)
      })))

  it.effect("a paid delivery right after a failed offer cut tries again; when that fails too, its goods' body fails with the code host's error, naming no digest; the next delivery cuts again", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { sale, token } = yield* soldLive(widget)
        script.answer = "fail"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)

        const goods = yield* download(token)
        expect(script.cuts).toHaveLength(2)
        expect(goods.sale.id).toBe(sale.id)
        expect(goods.digest).toBeNull()
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: null, livemode: true })
        expect(brief(yield* Effect.flip(Stream.runDrain(goods.body)))).toStrictEqual(brief(UNAVAILABLE))
        // The delivery's failure leaves offers alone for a while too.
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(2)

        script.answer = "cut"
        const again = yield* download(token)
        expect(script.cuts).toHaveLength(3)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(again.digest).toStrictEqual(digest)
        expect(digestOfBytes(yield* bytesOf(again.body))).toStrictEqual(digest)
      })))

  it.effect("a cut that succeeds forgets an earlier failure: the next offer tries again at once (a host that keeps no digest of it)", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "fail"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        script.answer = "forgetful"
        expect((yield* download(token)).digest).toStrictEqual(FORGOTTEN)
        expect(script.cuts).toHaveLength(2)
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(FORGOTTEN)
        expect(script.cuts).toHaveLength(3)
      })))
})

describe("Purchases: an archive the adapter does not keep (cut answering none)", () => {
  it.effect("the delivery names no digest and streams the archive straight from the code host; later offers and deliveries never cut it again", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "none"
        const goods = yield* download(token)
        expect(script.cuts).toHaveLength(1)
        expect(goods.digest).toBeNull()
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: null, livemode: true })

        // Not a failure: past OFFER_CUT_RETRY too, nobody cuts it again.
        script.answer = "cut"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        yield* TestClock.adjust(Duration.sum(OFFER_CUT_RETRY, Duration.hours(1)))
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        const again = yield* download(token)
        expect(again.digest).toBeNull()
        expect(script.cuts).toHaveLength(1)

        const bytes = yield* bytesOf(goods.body)
        expect(bytes.toString("utf8")).toBe(WIDGET_ARCHIVE)
        expect((yield* bytesOf(again.body)).toString("utf8")).toBe(WIDGET_ARCHIVE)
        expect(script.cuts).toHaveLength(1)
      })))

  it.effect("a cut the code host keeps its quota from (quota_reserved): the offer names none; the delivery streams the archive straight from the code host, without a digest, never a 503", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "reserved"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        const goods = yield* download(token)
        expect(script.cuts).toHaveLength(2)
        expect(goods.digest).toBeNull()
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: null })
        // A reserved quota is not a verdict on the archive: the next delivery cuts it and names its digest.
        script.answer = "cut"
        const later = yield* download(token)
        expect(script.cuts).toHaveLength(3)
        expect(later.digest).toStrictEqual(digestOfBytes(yield* bytesOf(later.body)))
        expect((yield* bytesOf(goods.body)).toString("utf8")).toBe(WIDGET_ARCHIVE)
      })))

  it.effect("after an offer learnt it, a delivery streams it without a cut or a digest", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        script.answer = "none"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)
        script.answer = "cut"
        const { token } = yield* soldLive(widget)
        const goods = yield* download(token)
        expect(goods.digest).toBeNull()
        expect(script.cuts).toHaveLength(1)
        expect((yield* bytesOf(goods.body)).toString("utf8")).toBe(WIDGET_ARCHIVE)
      })))
})

describe("Purchases: a live delivery names its archive's digest, cut first", () => {
  it.effect("the first delivery of a commit nobody offered cuts it, and names the digest of the bytes it delivers", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        const goods = yield* download(token)
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${SHA}`])
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(goods.digest).toStrictEqual(digest)
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: digest })
        expect(digestOfBytes(yield* bytesOf(goods.body))).toStrictEqual(digest)
      })))

  it.effect("a delivery whose digest is known already (its archive streamed once) does not cut, nor does an offer", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        const host = yield* CodeHost
        yield* Stream.runDrain(host.archive(WIDGET_REF, SHA, Option.none()))
        const digest = Option.getOrThrow(yield* known(SHA))
        const goods = yield* download(token)
        expect(goods.digest).toStrictEqual(digest)
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ archive: digest })
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(digest)
        expect(script.cuts).toStrictEqual([])
        // Nor does a second delivery.
        expect((yield* download(token)).digest).toStrictEqual(digest)
        expect(script.cuts).toStrictEqual([])
      })))

  it.effect("a delivery that comes while an offer's cut runs waits for it, then names its digest: one cut", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        const gate = yield* hold(script, SHA)
        const offer = yield* Effect.fork(quote(widget.checkout))
        yield* until(Effect.map(sleeping(1), (s) => s && script.cuts.length === 1))
        const delivery = yield* Effect.fork(download(token))
        yield* aWhile
        expect(yield* isRunning(delivery)).toBe(true)
        // The offer gives up waiting; the delivery does not.
        yield* TestClock.adjust(OFFER_CUT_WAIT)
        expect(archiveOf(yield* Fiber.join(offer))).toBeNull()
        yield* aWhile
        expect(yield* isRunning(delivery)).toBe(true)
        expect(script.cuts).toHaveLength(1)

        yield* open(gate)
        const goods = yield* Fiber.join(delivery)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(goods.digest).toStrictEqual(digest)
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: digest })
        expect(digestOfBytes(yield* bytesOf(goods.body))).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(1)
      })))

  it.effect("a delivery naming the repository in another letter case (its listing gone) shares the cut an offer started", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        // The sale's own repo and commit are what is delivered when its listing cannot be read.
        const { token } = yield* soldLive(widget, SHA, { repo: "octo-org/WIDGET", listingId: "lst_gone" as Sale["listingId"] })
        const gate = yield* hold(script, SHA)
        const offer = yield* Effect.fork(quote(widget.checkout))
        yield* until(Effect.map(sleeping(1), (s) => s && script.cuts.length === 1))
        const delivery = yield* Effect.fork(download(token))
        yield* aWhile
        expect(yield* isRunning(delivery)).toBe(true)
        yield* open(gate)
        const offered = yield* Fiber.join(offer)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(archiveOf(offered)).toStrictEqual(digest)
        const goods = yield* Fiber.join(delivery)
        expect(goods.filename).toBe(`octo-org-WIDGET-${SHA.slice(0, 7)}.tar.gz`)
        expect(goods.digest).toStrictEqual(digest)
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${SHA}`])
      })))

  it.effect("concurrent deliveries of one commit share one cut", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const first = yield* soldLive(widget)
        const second = yield* soldLive(widget)
        const gate = yield* hold(script, SHA)
        const fiber = yield* Effect.fork(Effect.all([download(first.token), download(second.token)], { concurrency: "unbounded" }))
        yield* until(Effect.sync(() => script.cuts.length === 1))
        yield* aWhile
        expect(yield* isRunning(fiber)).toBe(true)
        yield* open(gate)
        const [a, b] = yield* Fiber.join(fiber)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect([a.digest, b.digest]).toStrictEqual([digest, digest])
        expect(script.cuts).toHaveLength(1)
      })))

  it.effect("an update delivery cuts the update's commit, not the purchase's", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { sale } = yield* soldLive(widget)
        yield* push(C2)
        const goods = yield* Effect.flatMap(Purchases, (p) => p.deliverLatest(sale, widget.listing))
        expect(script.cuts).toStrictEqual([`Octo-Org/Widget@${C2}`])
        const digest = Option.getOrThrow(yield* known(C2))
        expect(goods.digest).toStrictEqual(digest)
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: C2, archive: digest, delivery: goods.update!.id })
        expect(yield* known(SHA)).toStrictEqual(Option.none())
      })))
})


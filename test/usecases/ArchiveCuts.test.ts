/*
 * Cutting a commit's archive ahead of its delivery (domain/usecases/ArchiveCuts.ts), as the Purchases
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
import type { Checkout } from "../../domain/Checkout.js"
import { RepoRef } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { type ArchiveDigest, parseJws, type ReceiptClaims } from "../../domain/ReceiptClaims.js"
import { receiptToken } from "../../domain/rules/Receipt.js"
import { Sale } from "../../domain/Sale.js"
import { CodeHost, CodeHostError, type CutPurpose } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { aCheckout, aListing, aSale } from "../../testing/Fixtures.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { type Goods, Purchases } from "../../domain/usecases/Purchases.js"
import {
  DELIVERY_CUT_RETRY,
  MAX_OFFER_CUTS,
  OFFER_CUT_RETRY,
  OFFER_CUT_WAIT,
  OFFER_CUT_WINDOW,
  OFFER_CUTS_PER_CLIENT,
  OFFER_CUTS_PER_LISTING,
  OFFER_CUTS_PER_OWNER
} from "../../domain/usecases/ArchiveCuts.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Storefront } from "../../domain/usecases/Storefront.js"
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
/** A code host's rate limit, reset in ten minutes. */
const RATE_LIMITED = new CodeHostError({ reason: "rate_limited", message: "The code host's rate limit was reached.", retryAfterSeconds: 600 })
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
  /** Each cut's purpose, in the order of `cuts`. */
  readonly purposes: Array<CutPurpose>
  readonly gates: Map<string, Deferred.Deferred<void, CodeHostError>>
  answer: "cut" | "none" | "fail" | "forgetful" | "reserved" | "rate-limited" | "offer-none" | "offer-reserved"
}

const FORGOTTEN: ArchiveDigest = { sha256: "f0".repeat(32), size: 7 }

/** Purchases (and the repo page, which shares its cuts) over memoryApp's ports (the widget, the gadget, the secret), with a live and a test facilitator and the scripted cut. */
const setup = () => {
  const script: Script = { cuts: [], purposes: [], gates: new Map(), answer: "cut" }
  const wrapHost = (host: Host): Host => ({
    ...host,
    cut: (ref, commitSha, token, purpose) =>
      Effect.suspend(() => {
        script.cuts.push(`${ref.owner}/${ref.name}@${commitSha}`)
        script.purposes.push(purpose)
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
              case "rate-limited":
                return Effect.fail(RATE_LIMITED)
              case "offer-none":
                return purpose === "offer" ? Effect.succeed(Option.none<ArchiveDigest>()) : host.cut(ref, commitSha, token, purpose)
              case "offer-reserved":
                return purpose === "offer" ? Effect.fail(RESERVED) : host.cut(ref, commitSha, token, purpose)
              default:
                return host.cut(ref, commitSha, token, purpose)
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

describe("Offers' cuts counted per listing, owner and client", () => {
  /** A public repo of `owner` on the memory host, listed anonymously, and its checkout. */
  const listed = (owner: string, name: string) =>
    Effect.gen(function*() {
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ owner, name, headSha: SHA, files: { "README.md": `# ${owner}/${name}\n` } }))
      const store = yield* ListingStore
      const listing = aListing({ repo: new RepoRef({ owner, name }), hostPat: null })
      const checkout = aCheckout(listing)
      yield* store.insert(listing)
      yield* store.insertCheckout(checkout)
      return { listing, checkout }
    })
  const quoteBy = (checkout: Checkout, client?: string) => Effect.flatMap(Purchases, (p) => p.quote(checkout.id, true, client))
  const pageBy = (owner: string, name: string, client?: string) =>
    Effect.map(Effect.flatMap(Storefront, (st) => st.repoPage(owner, name, client)), (page) => page.preview?.archive ?? null)
  const range = (n: number) => Array.from({ length: n }, (_, i) => i)

  it.effect("one listing's offers start at most OFFER_CUTS_PER_LISTING cuts an hour (its seller pushing over and over): then its offers and page name none and download nothing until the hour has passed; offers joining a running cut are not counted; its deliveries are never held back", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(OFFER_CUTS_PER_LISTING).toBe(6)
        expect(OFFER_CUT_WINDOW).toStrictEqual(Duration.hours(1))
        const widget = yield* listedWidget
        // Ten offers of the first commit join one cut: one counted.
        const gate = yield* hold(script, SHA)
        const joined = yield* Effect.fork(Effect.all(range(10).map(() => quote(widget.checkout)), { concurrency: "unbounded" }))
        yield* until(sleeping(10))
        yield* open(gate)
        yield* Fiber.join(joined)
        for (const sha of [C2, C3, C4, C5, C6]) {
          yield* push(sha)
          expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(Option.getOrThrow(yield* known(sha)))
        }
        expect(script.cuts).toHaveLength(6)
        yield* push(C7)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(yield* pageBy(WIDGET.owner, WIDGET.name)).toBeNull()
        expect(script.cuts).toHaveLength(6)
        // Another listing is not held back.
        const other = yield* listed("Someone", "Else")
        expect(archiveOf(yield* quote(other.checkout))).not.toBeNull()
        expect(script.cuts).toHaveLength(7)

        yield* TestClock.adjust(Duration.toMillis(OFFER_CUT_WINDOW) - 1)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        yield* TestClock.adjust(1)
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(Option.getOrThrow(yield* known(C7)))
        expect(script.cuts).toHaveLength(8)

        // Its next six commits spend the new hour's count; a sale of the seventh is delivered with its digest all the same.
        const more = ["a", "b", "c", "d", "e", "f", "9"].map((d) => d.repeat(40))
        for (const sha of more.slice(0, 5)) {
          yield* push(sha)
          expect(archiveOf(yield* quote(widget.checkout))).not.toBeNull()
        }
        yield* push(more[5]!)
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        const { token } = yield* soldLive(widget, more[5]!)
        expect((yield* download(token)).digest).toStrictEqual(Option.getOrThrow(yield* known(more[5]!)))
        expect(script.purposes.filter((p) => p === "paid")).toHaveLength(1)
      })))

  it.effect("one owner's listings start at most OFFER_CUTS_PER_OWNER cuts an hour between them, however the owner's name is spelt; another owner's are not held back", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(OFFER_CUTS_PER_OWNER).toBe(24)
        const mine = yield* Effect.forEach(range(25), (i) => listed(i % 2 === 0 ? "Mallory" : "MALLORY", `repo-${i}`))
        const named = yield* Effect.forEach(mine, ({ checkout }) => Effect.map(quoteBy(checkout), archiveOf))
        expect(named.slice(0, 24).every((a) => a !== null)).toBe(true)
        expect(named[24]).toBeNull()
        expect(yield* pageBy("mallory", "repo-24")).toBeNull()
        expect(script.cuts).toHaveLength(24)
        const other = yield* listed("Trent", "repo")
        expect(archiveOf(yield* quoteBy(other.checkout))).not.toBeNull()
        yield* TestClock.adjust(OFFER_CUT_WINDOW)
        expect(archiveOf(yield* quoteBy(mine[24]!.checkout))).not.toBeNull()
        expect(script.cuts).toHaveLength(26)
      })))

  it.effect("one client's 402s and repo page views start at most OFFER_CUTS_PER_CLIENT cuts an hour (listings of many owners); another client, or a door that names none, is not held back", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(OFFER_CUTS_PER_CLIENT).toBe(24)
        const listings = yield* Effect.forEach(range(27), (i) => listed(`owner-${i}`, "repo"))
        const client = "203.0.113.9"
        for (const i of range(12)) expect(archiveOf(yield* quoteBy(listings[i]!.checkout, client))).not.toBeNull()
        for (const i of range(12)) expect(yield* pageBy(`owner-${12 + i}`, "repo", client)).not.toBeNull()
        expect(script.cuts).toHaveLength(24)
        expect(archiveOf(yield* quoteBy(listings[24]!.checkout, client))).toBeNull()
        expect(yield* pageBy("owner-25", "repo", client)).toBeNull()
        expect(script.cuts).toHaveLength(24)
        expect(archiveOf(yield* quoteBy(listings[24]!.checkout, "198.51.100.1"))).not.toBeNull()
        expect(yield* pageBy("owner-25", "repo")).not.toBeNull()
        expect(script.cuts).toHaveLength(26)
        yield* TestClock.adjust(OFFER_CUT_WINDOW)
        expect(archiveOf(yield* quoteBy(listings[26]!.checkout, client))).not.toBeNull()
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

  it.effect("a failed cut is not tried again per request: deliveries within DELIVERY_CUT_RETRY answer its failure at once, with no cut, their Retry-After the time left; then a delivery cuts again", () =>
    run((script) =>
      Effect.gen(function*() {
        expect(DELIVERY_CUT_RETRY).toStrictEqual(Duration.seconds(30))
        const widget = yield* listedWidget
        const { sale, token } = yield* soldLive(widget)
        script.answer = "fail"
        const goods = yield* download(token)
        expect(script.cuts).toHaveLength(1)
        expect(script.purposes).toStrictEqual(["paid"])
        expect(goods.sale.id).toBe(sale.id)
        expect(goods.digest).toBeNull()
        expect(claimsOf(goods.signedReceipt)).toMatchObject({ commit: SHA, archive: null, livemode: true })
        expect(brief(yield* Effect.flip(Stream.runDrain(goods.body)))).toStrictEqual(brief(UNAVAILABLE))

        // The host is back, but a receipt link asked 50 times in the next 30 s costs it nothing.
        script.answer = "cut"
        const failureOf = Effect.flatMap(download(token), (g) => {
          expect(g.digest).toBeNull()
          return Effect.flip(Stream.runDrain(g.body))
        })
        for (let i = 0; i < 50; i++) {
          expect(brief(yield* failureOf)).toStrictEqual({ ...brief(UNAVAILABLE), retryAfterSeconds: 30 })
        }
        yield* TestClock.adjust(29_000)
        expect((yield* failureOf).retryAfterSeconds).toBe(1)
        yield* TestClock.adjust(999)
        expect((yield* failureOf).retryAfterSeconds).toBe(1)
        // The delivery's failure leaves offers alone for their minute too.
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)

        yield* TestClock.adjust(1)
        const again = yield* download(token)
        expect(script.cuts).toHaveLength(2)
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(again.digest).toStrictEqual(digest)
        expect(digestOfBytes(yield* bytesOf(again.body))).toStrictEqual(digest)
      })))

  it.effect("a delivery right after an offer's cut failed answers that failure without a cut of its own; a code host asking for longer (a rate limit's reset) is left alone that long, by offers and deliveries alike", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "rate-limited"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.purposes).toStrictEqual(["offer"])
        script.answer = "cut"
        const failureOf = Effect.flatMap(download(token), (g) => Effect.flip(Stream.runDrain(g.body)))
        expect(brief(yield* failureOf)).toStrictEqual(brief(RATE_LIMITED))
        // Past both retry waits, but not the host's 600 s: still nothing asked.
        yield* TestClock.adjust(Duration.sum(OFFER_CUT_RETRY, Duration.seconds(1)))
        expect(yield* failureOf).toMatchObject({ reason: "rate_limited", retryAfterSeconds: 600 - 61 })
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        yield* TestClock.adjust(Duration.seconds(600 - 61 - 1))
        expect(yield* failureOf).toMatchObject({ reason: "rate_limited", retryAfterSeconds: 1 })
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.cuts).toHaveLength(1)
        yield* TestClock.adjust(Duration.seconds(1))
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(Option.getOrThrow(yield* known(SHA)))
        expect(script.purposes).toStrictEqual(["offer", "offer"])
      })))

  it.effect("a cut that succeeds forgets an earlier failure: the next offer tries again at once (a host that keeps no digest of it)", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "fail"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        // Past the deliveries' wait (the offers' is longer).
        yield* TestClock.adjust(DELIVERY_CUT_RETRY)
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

  it.effect("an archive an offer does not keep (too large for an offer's cut): offers leave it alone, past any wait; its first delivery cuts it for itself and names its digest, and offers name it from then on", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        script.answer = "offer-none"
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(script.purposes).toStrictEqual(["offer"])
        yield* TestClock.adjust(Duration.sum(OFFER_CUT_RETRY, Duration.hours(2)))
        expect(archiveOf(yield* quote(widget.checkout))).toBeNull()
        expect(Option.isNone(yield* Effect.flatMap(Storefront, (st) => Effect.map(st.repoPage(WIDGET.owner, WIDGET.name), (p) => Option.fromNullable(p.preview?.archive))))).toBe(true)
        expect(script.cuts).toHaveLength(1)

        const { token } = yield* soldLive(widget)
        const goods = yield* download(token)
        expect(script.purposes).toStrictEqual(["offer", "paid"])
        const digest = Option.getOrThrow(yield* known(SHA))
        expect(goods.digest).toStrictEqual(digest)
        expect(digestOfBytes(yield* bytesOf(goods.body))).toStrictEqual(digest)
        expect(archiveOf(yield* quote(widget.checkout))).toStrictEqual(digest)
        expect(script.cuts).toHaveLength(2)
      })))

  it.effect.each(["offer-none", "offer-reserved"] as const)("a delivery that joined an offer's cut which kept nothing (%s: too large for an offer, or kept from the quota) cuts for itself, once, and names the digest", (answer) =>
      run((script) =>
        Effect.gen(function*() {
          const widget = yield* listedWidget
          const { token } = yield* soldLive(widget)
          script.answer = answer
          const gate = yield* hold(script, SHA)
          const offer = yield* Effect.fork(quote(widget.checkout))
          yield* until(Effect.map(sleeping(1), (s) => s && script.cuts.length === 1))
          const deliveries = yield* Effect.fork(Effect.all([download(token), download(token)], { concurrency: "unbounded" }))
          yield* aWhile
          expect(script.cuts).toHaveLength(1)
          script.gates.delete(SHA)
          yield* open(gate)
          expect(archiveOf(yield* Fiber.join(offer))).toBeNull()
          const [a, b] = yield* Fiber.join(deliveries)
          const digest = Option.getOrThrow(yield* known(SHA))
          expect([a.digest, b.digest]).toStrictEqual([digest, digest])
          expect(script.purposes).toStrictEqual(["offer", "paid"])
        })))

  it.effect("a delivery that joined a delivery's cut which kept nothing does not cut again", () =>
    run((script) =>
      Effect.gen(function*() {
        const widget = yield* listedWidget
        const { token } = yield* soldLive(widget)
        script.answer = "none"
        const gate = yield* hold(script, SHA)
        const deliveries = yield* Effect.fork(Effect.all([download(token), download(token)], { concurrency: "unbounded" }))
        yield* until(Effect.sync(() => script.cuts.length === 1))
        yield* aWhile
        yield* open(gate)
        const [a, b] = yield* Fiber.join(deliveries)
        expect([a.digest, b.digest]).toStrictEqual([null, null])
        expect(script.purposes).toStrictEqual(["paid"])
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


/*
 * Listings on memory adapters (issue 28): the use case called as Effects over memoryPorts (seeded memory code
 * host, memory storage, the test SecretBox), its answers and the stored listings and checkouts asserted. Beside
 * test/http/listings.test.ts and test/http/private.test.ts, not instead of them. Each test names what is
 * refused or guaranteed, and why.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { hostPatAad, type Listing } from "../../domain/Listing.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Address } from "../../domain/Wallet.js"
import { ANONYMOUS_LISTINGS_PER_HOUR, Listings } from "../../domain/usecases/Listings.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SecretBox } from "../../ports/SecretBox.js"
import {
  atNow,
  BASE_WALLET,
  BASE_WALLET_2,
  brief,
  failureOf,
  memoryApp,
  SECRET,
  SECRET_TOKEN,
  shown,
  signedIn,
  SOLANA_WALLET,
  WIDGET
} from "./memoryApp.js"

const CLIENT = "203.0.113.9"
const WIDGET_URL = "https://github.com/Octo-Org/Widget"
const SECRET_URL = "https://github.com/Octo-Org/Secret"

const live = (owner: string, name: string) => Effect.flatMap(ListingStore, (s) => s.findLive(owner, name))
const liveWidget = live(WIDGET.owner, WIDGET.name)
const liveSecret = live(SECRET.owner, SECRET.name)
const checkoutOf = (listing: Listing) =>
  Effect.map(Effect.flatMap(ListingStore, (s) => s.findCheckoutWithListing(listing.checkoutId)), (found) => Option.getOrThrow(found).checkout)
const hostCalls = Effect.flatMap(CodeHostMemoryControl, (c) => c.calls)
const openPat = (listing: Listing) => Effect.flatMap(SecretBox, (box) => box.open(listing.hostPat!, hostPatAad(listing)))

/** The widget listed by `principal` (null: anonymously) at 12.34 on BASE_WALLET. */
const listWidget = (principal: Parameters<Listings["create"]>[1], extra: Partial<Parameters<Listings["create"]>[0]> = {}) =>
  Effect.flatMap(Listings, (l) => l.create({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET, ...extra }, principal, CLIENT))

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(Effect.zipRight(atNow, effect), memoryApp()) as Effect.Effect<A, E>

describe("Listings.create: what is stored", () => {
  it.effect("a public repo listed anonymously is stored live, unowned, with its checkout at the price; a host_pat sent for a public repo is not kept", () =>
    run(Effect.gen(function*() {
      const listing = yield* listWidget(null, { host_pat: Redacted.make("ghp_notNeeded") })
      expect(listing).toMatchObject({ accountId: null, status: "live", isPrivate: false, hostPat: null, price: AtomicAmount.make(12_340_000n) })
      expect(listing.payTo).toEqual({ base: BASE_WALLET, solana: null })
      const stored = Option.getOrThrow(yield* liveWidget)
      expect(stored.id).toBe(listing.id)
      expect(stored.hostPat).toBeNull()
      const checkout = yield* checkoutOf(stored)
      expect(checkout).toMatchObject({ listingId: listing.id, price: AtomicAmount.make(12_340_000n), voidedAt: null })
    })))

  it.effect("a private repo's token is stored sealed (bound to the listing) and never in what is returned: only tokenOf opens it", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const listing = yield* Effect.flatMap(Listings, (l) =>
        l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: Redacted.make(SECRET_TOKEN) }, principal, CLIENT))
      expect(listing.isPrivate).toBe(true)
      expect(listing.hostPat).not.toBeNull()
      expect(shown(listing)).not.toContain(SECRET_TOKEN)
      expect(String(listing.hostPat)).not.toContain(SECRET_TOKEN)
      const stored = Option.getOrThrow(yield* liveSecret)
      expect(shown(stored)).not.toContain(SECRET_TOKEN)
      expect(Redacted.value(yield* openPat(stored))).toBe(SECRET_TOKEN)
      // Bound to this listing: under another listing's binding it does not open.
      const elsewhere = yield* Effect.flip(Effect.flatMap(SecretBox, (box) => box.open(stored.hostPat!, hostPatAad({ id: "lst_other" as Listing["id"] }))))
      expect(elsewhere._tag).toBe("SecretBoxError")
      const token = yield* Effect.flatMap(Listings, (l) => l.tokenOf(stored))
      expect(Option.map(token, Redacted.value)).toEqual(Option.some(SECRET_TOKEN))
    })))

  it.effect("a private repo without host_pat is refused (HostRefused private_repo_needs_token) and nothing is stored", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const error = yield* failureOf(Effect.flatMap(Listings, (l) => l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, principal, CLIENT)))
      expect(brief(error)).toMatchObject({ _tag: "HostRefused", reason: "private_repo_needs_token" })
      expect(yield* liveSecret).toEqual(Option.none())
    })))

  it.effect("a host_pat the code host rejects is refused (token_rejected) and stored nowhere: a token is kept only after it worked", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const error = yield* failureOf(Effect.flatMap(Listings, (l) =>
        l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: Redacted.make("ghp_wrong") }, principal, CLIENT)))
      expect(brief(error)).toMatchObject({ _tag: "HostRefused", reason: "token_rejected" })
      expect(yield* liveSecret).toEqual(Option.none())
    })))

  it.effect("bad host_url, price and wallet are refused together (InvalidInput naming each field) before the code host is asked; nothing is stored", () =>
    run(Effect.gen(function*() {
      const error = yield* failureOf(Effect.flatMap(Listings, (l) =>
        l.create({ host_url: "https://gitlab.com/Octo-Org/Widget", price_usd: "0.001", wallet_base: BASE_WALLET.replace("fCD6", "FCD6"), wallet_solana: "not-base58!" }, null, CLIENT)))
      expect(error._tag).toBe("InvalidInput")
      expect((error as { errors: ReadonlyArray<{ field: string }> }).errors.map((e) => e.field).sort()).toEqual(["host_url", "price_usd", "wallet_base", "wallet_solana"])
      expect(yield* hostCalls).toBe(0)
      expect(yield* liveWidget).toEqual(Option.none())
    })))

  it.effect("a price out of range (0.00, 100000.01, 1e3) is InvalidInput naming price_usd, and the repo is not listed", () =>
    run(Effect.gen(function*() {
      for (const price_usd of ["0.00", "100000.01", "1e3", "-1.00", "12.345"]) {
        const error = yield* failureOf(listWidget(null, { price_usd }))
        expect({ price_usd, error: error._tag }).toEqual({ price_usd, error: "InvalidInput" })
      }
      expect(yield* liveWidget).toEqual(Option.none())
    })))
})

describe("Listings.create: defaults and outages", () => {
  it.effect("a signed-in seller naming no wallet lists on the account's default wallets; without defaults or a price it is listed but not selling", () =>
    run(Effect.gen(function*() {
      const withDefaults = yield* signedIn({ wallets: { base: Address.make(BASE_WALLET), solana: Address.make(SOLANA_WALLET) } })
      const listing = yield* Effect.flatMap(Listings, (l) => l.create({ host_url: WIDGET_URL, price_usd: "1.00" }, withDefaults.principal, CLIENT))
      expect(listing.payTo).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })
      expect((yield* checkoutOf(listing)).chains).toEqual(["base", "solana"])
      const bare = yield* signedIn()
      const unsold = yield* Effect.flatMap(Listings, (l) => l.create({ host_url: "https://github.com/Octo-Org/Gadget" }, bare.principal, CLIENT))
      expect(unsold).toMatchObject({ status: "live", price: null })
      expect(unsold.payTo).toEqual({ base: null, solana: null })
    })))

  it.effect("a code-host outage is HostUnavailable with a retry hint, not a refusal of the repo, and nothing is stored", () =>
    run(Effect.gen(function*() {
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.setDown("rate_limited"))
      const error = yield* failureOf(listWidget(null))
      expect(brief(error)).toMatchObject({ _tag: "HostUnavailable", retryAfterSeconds: 60 })
      expect(yield* liveWidget).toEqual(Option.none())
    })))

  it.effect("once taken down, the repo is free: another account lists it afresh (a new listing; the old one stays taken down)", () =>
    run(Effect.gen(function*() {
      const first = yield* signedIn()
      const second = yield* signedIn()
      const old = yield* listWidget(first.principal)
      yield* Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Widget", first.principal))
      const fresh = yield* listWidget(second.principal, { price_usd: "2.00" })
      expect(fresh.id).not.toBe(old.id)
      expect(fresh.accountId).toBe(second.account.id)
      expect(Option.getOrThrow(yield* Effect.flatMap(ListingStore, (s) => s.findById(old.id))).status).toBe("taken_down")
    })))
})

describe("Listings.create: who may re-list a listed repo", () => {
  it.effect("another account re-listing someone's repo is refused (AlreadyListed): owner, price, payout and checkout untouched", () =>
    run(Effect.gen(function*() {
      const owner = yield* signedIn()
      const other = yield* signedIn()
      const original = yield* listWidget(owner.principal)
      const error = yield* failureOf(listWidget(other.principal, { price_usd: "0.01", wallet_base: BASE_WALLET_2 }))
      expect(brief(error)).toMatchObject({ _tag: "AlreadyListed", repo: "Octo-Org/Widget" })
      const stored = Option.getOrThrow(yield* liveWidget)
      expect(stored).toMatchObject({ id: original.id, accountId: owner.account.id, price: original.price, checkoutId: original.checkoutId })
      expect(stored.payTo.base).toBe(BASE_WALLET)
      expect((yield* checkoutOf(stored)).voidedAt).toBeNull()
    })))

  it.effect("an anonymous listing cannot be re-listed by another anonymous caller nor by an account without proof of control (AlreadyListed)", () =>
    run(Effect.gen(function*() {
      const original = yield* listWidget(null)
      const { principal } = yield* signedIn()
      expect((yield* failureOf(listWidget(null, { price_usd: "0.01" })))._tag).toBe("AlreadyListed")
      expect((yield* failureOf(listWidget(principal, { price_usd: "0.01" })))._tag).toBe("AlreadyListed")
      const stored = Option.getOrThrow(yield* liveWidget)
      expect(stored).toMatchObject({ id: original.id, accountId: null, price: original.price })
    })))

  it.effect("the owner re-listing updates the same listing: sent fields change, unsent ones are kept, the old checkout is voided", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const first = yield* listWidget(principal, { wallet_solana: SOLANA_WALLET })
      const again = yield* Effect.flatMap(Listings, (l) => l.create({ host_url: WIDGET_URL, price_usd: "20.00" }, principal, CLIENT))
      expect(again.id).toBe(first.id)
      expect(again.price).toBe(AtomicAmount.make(20_000_000n))
      expect(again.payTo).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })
      expect(again.checkoutId).not.toBe(first.checkoutId)
      expect((yield* checkoutOf(first)).voidedAt).not.toBeNull()
      expect((yield* checkoutOf(again))).toMatchObject({ price: AtomicAmount.make(20_000_000n), voidedAt: null })
    })))

  it.effect("an account whose verified code-host login owns the repo takes over an anonymous listing: the old one is taken down, its checkout voided", () =>
    run(Effect.gen(function*() {
      const old = yield* listWidget(null)
      const { account, principal } = yield* signedIn({ hostLogin: "octo-org" })
      const taken = yield* listWidget(principal, { price_usd: "3.00" })
      expect(taken.id).not.toBe(old.id)
      expect(taken.accountId).toBe(account.id)
      const previous = Option.getOrThrow(yield* Effect.flatMap(ListingStore, (s) => s.findById(old.id)))
      expect(previous.status).toBe("taken_down")
      expect((yield* checkoutOf(old)).voidedAt).not.toBeNull()
      expect(Option.getOrThrow(yield* liveWidget).id).toBe(taken.id)
    })))

  it.effect("re-listing a private repo as someone else never uses the owner's stored token: without host_pat the code host refuses (private_repo_needs_token)", () =>
    run(Effect.gen(function*() {
      const owner = yield* signedIn()
      const other = yield* signedIn()
      yield* Effect.flatMap(Listings, (l) =>
        l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: Redacted.make(SECRET_TOKEN) }, owner.principal, CLIENT))
      for (const principal of [other.principal, null]) {
        const error = yield* failureOf(Effect.flatMap(Listings, (l) => l.create({ host_url: SECRET_URL }, principal, CLIENT)))
        expect(brief(error)).toMatchObject({ _tag: "HostRefused", reason: "private_repo_needs_token" })
      }
      // The owner, re-listing without host_pat, is asked with its own stored token and keeps it.
      const again = yield* Effect.flatMap(Listings, (l) => l.create({ host_url: SECRET_URL, price_usd: "6.00" }, owner.principal, CLIENT))
      expect(Redacted.value(yield* openPat(again))).toBe(SECRET_TOKEN)
    })))

  it.effect(`anonymous listings are limited to ${ANONYMOUS_LISTINGS_PER_HOUR} an hour per client (RateLimited, code host not asked); signed-in callers and other clients are not held up`, () =>
    run(Effect.gen(function*() {
      for (let i = 0; i < ANONYMOUS_LISTINGS_PER_HOUR; i++) {
        // Each attempt counts, listed or not (these repos do not exist).
        yield* Effect.flip(Effect.flatMap(Listings, (l) => l.create({ host_url: `https://github.com/Nobody/r${i}` }, null, CLIENT)))
      }
      const callsBefore = yield* hostCalls
      const error = yield* failureOf(listWidget(null))
      expect(error._tag).toBe("RateLimited")
      expect((error as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0)
      expect(yield* hostCalls).toBe(callsBefore)
      expect(yield* liveWidget).toEqual(Option.none())
      const { principal } = yield* signedIn()
      expect((yield* listWidget(principal)).status).toBe("live")
      expect((yield* Effect.flatMap(Listings, (l) => l.create({ host_url: "https://github.com/Octo-Org/Gadget" }, null, "198.51.100.1"))).status).toBe("live")
    })))
})

describe("Listings.update and takedown: only the owner", () => {
  it.effect("another account cannot reprice a listing it does not own: Forbidden, price and checkout unchanged", () =>
    run(Effect.gen(function*() {
      const owner = yield* signedIn()
      const other = yield* signedIn()
      const listing = yield* listWidget(owner.principal)
      const error = yield* failureOf(Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Widget", { price_usd: "0.01", wallet_base: BASE_WALLET_2 }, other.principal)))
      expect(error._tag).toBe("Forbidden")
      const stored = Option.getOrThrow(yield* liveWidget)
      expect(stored).toMatchObject({ price: listing.price, checkoutId: listing.checkoutId })
      expect(stored.payTo.base).toBe(BASE_WALLET)
      expect((yield* checkoutOf(stored)).voidedAt).toBeNull()
    })))

  it.effect("another account cannot take a listing down: Forbidden, it stays live and selling", () =>
    run(Effect.gen(function*() {
      const owner = yield* signedIn()
      const other = yield* signedIn()
      const listing = yield* listWidget(owner.principal)
      expect((yield* failureOf(Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Widget", other.principal))))._tag).toBe("Forbidden")
      const stored = Option.getOrThrow(yield* liveWidget)
      expect(stored.status).toBe("live")
      expect((yield* checkoutOf(listing)).voidedAt).toBeNull()
    })))

  it.effect("an anonymous listing has no owner to manage it: no account may reprice or take it down (Forbidden)", () =>
    run(Effect.gen(function*() {
      const listing = yield* listWidget(null)
      const { principal } = yield* signedIn()
      expect((yield* failureOf(Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Widget", { price_usd: "1.00" }, principal))))._tag).toBe("Forbidden")
      expect((yield* failureOf(Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Widget", principal))))._tag).toBe("Forbidden")
      expect(Option.getOrThrow(yield* liveWidget)).toMatchObject({ price: listing.price, status: "live" })
    })))

  it.effect("the owner reprices: a new checkout at the new price, the old one voided so stale links stop selling", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const listing = yield* listWidget(principal)
      const repriced = yield* Effect.flatMap(Listings, (l) => l.update("octo-org", "widget", { price_usd: "99.99" }, principal))
      expect(repriced.id).toBe(listing.id)
      expect(repriced.price).toBe(AtomicAmount.make(99_990_000n))
      expect(repriced.checkoutId).not.toBe(listing.checkoutId)
      expect((yield* checkoutOf(listing)).voidedAt).not.toBeNull()
      expect(yield* checkoutOf(repriced)).toMatchObject({ price: AtomicAmount.make(99_990_000n), voidedAt: null })
    })))

  it.effect("a bad price on update is InvalidInput naming price_usd, and the listing and its checkout are unchanged", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const listing = yield* listWidget(principal)
      const error = yield* failureOf(Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Widget", { price_usd: "free", wallet_base: BASE_WALLET_2 }, principal)))
      expect(error._tag).toBe("InvalidInput")
      expect((error as { errors: ReadonlyArray<{ field: string }> }).errors.map((e) => e.field)).toEqual(["price_usd"])
      expect(Option.getOrThrow(yield* liveWidget)).toMatchObject({ price: listing.price, checkoutId: listing.checkoutId })
    })))

  it.effect("a new host_pat on update must work before it replaces the stored one: a rejected token is refused and the old one kept", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      yield* Effect.flatMap(Listings, (l) =>
        l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: Redacted.make(SECRET_TOKEN) }, principal, CLIENT))
      const error = yield* failureOf(Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Secret", { host_pat: Redacted.make("ghp_wrong") }, principal)))
      expect(brief(error)).toMatchObject({ _tag: "HostRefused", reason: "token_rejected" })
      expect(Redacted.value(yield* openPat(Option.getOrThrow(yield* liveSecret)))).toBe(SECRET_TOKEN)
      // host_pat "" clears it.
      const cleared = yield* Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Secret", { host_pat: Redacted.make("") }, principal))
      expect(cleared.hostPat).toBeNull()
    })))

  it.effect("the owner's takedown ends the listing: not live, checkout voided, the sealed token destroyed, gone from the inventory", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const listing = yield* Effect.flatMap(Listings, (l) =>
        l.create({ host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: Redacted.make(SECRET_TOKEN) }, principal, CLIENT))
      expect((yield* Effect.flatMap(Listings, (l) => l.inventory(principal))).map((l) => l.id)).toEqual([listing.id])
      yield* Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Secret", principal))
      expect(yield* liveSecret).toEqual(Option.none())
      const ended = Option.getOrThrow(yield* Effect.flatMap(ListingStore, (s) => s.findById(listing.id)))
      expect(ended).toMatchObject({ status: "taken_down", hostPat: null })
      expect((yield* checkoutOf(listing)).voidedAt).not.toBeNull()
      expect(yield* Effect.flatMap(Listings, (l) => l.inventory(principal))).toEqual([])
      // Nothing left to change: a second takedown or a reprice is NotFound.
      expect((yield* failureOf(Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Secret", principal))))._tag).toBe("NotFound")
      expect((yield* failureOf(Effect.flatMap(Listings, (l) => l.update("Octo-Org", "Secret", { price_usd: "1.00" }, principal))))._tag).toBe("NotFound")
    })))

  it.effect("the inventory is the caller's own live listings only", () =>
    run(Effect.gen(function*() {
      const a = yield* signedIn()
      const b = yield* signedIn()
      const mine = yield* listWidget(a.principal)
      yield* Effect.flatMap(Listings, (l) => l.create({ host_url: "https://github.com/Octo-Org/Gadget" }, b.principal, CLIENT))
      expect((yield* Effect.flatMap(Listings, (l) => l.inventory(a.principal))).map((l) => l.id)).toEqual([mine.id])
    })))
})

import { describe, expect } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { AccountId, CheckoutId, ListingId, RepoRef, SealedSecret } from "../../domain/Ids.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Checkout } from "../../domain/Checkout.js"
import { Listing } from "../../domain/Listing.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Transactor } from "../../ports/Transactor.js"
import { aCheckout, aListing, at, BEYOND_DOUBLE, SOLANA_ADDRESS, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const takenDown = (listing: Listing, when: Date) =>
  new Listing({ ...listing, status: "taken_down", takenDownAt: when, hostPat: null, updatedAt: when })

/** The ListingStore port's guarantees, for any adapter. */
export const ListingStoreContract = (it: ContractIt<ListingStore | Transactor>, _backend: Backend) =>
  describe("ListingStore", () => {
    it.effect("stores a listing and finds it by id with every field intact", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const listing = aListing({ price: BEYOND_DOUBLE, payTo: { base: null, solana: SOLANA_ADDRESS }, isPrivate: true, updatesDays: 3650 })
        yield* store.insert(listing)
        expect(yield* store.findById(listing.id)).toStrictEqual(Option.some(listing))
        expect(Option.getOrThrow(yield* store.findById(listing.id)).price).toBe(9_007_199_254_740_993n)
        expect(yield* store.findById(ListingId.make(`lst_${unique()}`))).toStrictEqual(Option.none())
      }))

    it.effect("finds the live listing of a repo case-insensitively", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const listing = aListing({ repo: new RepoRef({ owner: `MixedCase-${unique()}`, name: "Repo.JS" }) })
        yield* store.insert(listing)
        const { name, owner } = listing.repo
        expect(yield* store.findLive(owner.toLowerCase(), name.toUpperCase())).toStrictEqual(Option.some(listing))
        expect(yield* store.findLive(owner, `${name}-other`)).toStrictEqual(Option.none())
        expect(yield* store.findLive(`${owner}x`, name)).toStrictEqual(Option.none())
      }))

    it.effect("keeps one live listing per repo: a second one fails with LiveListingExists", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const first = aListing()
        yield* store.insert(first)
        const second = aListing({
          repo: new RepoRef({ owner: first.repo.owner.toUpperCase(), name: first.repo.name.toLowerCase() })
        })
        const error = yield* Effect.flip(store.insert(second))
        expect(error._tag).toBe("LiveListingExists")
        expect(error._tag === "LiveListingExists" && error.repo).toBe(second.repo.slug)
        expect(yield* store.findById(second.id)).toStrictEqual(Option.none())
        expect(yield* store.findLive(first.repo.owner, first.repo.name)).toStrictEqual(Option.some(first))
      }))

    it.effect("does not let a taken-down listing block a new live one", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const old = aListing()
        yield* store.insert(old)
        const down = takenDown(old, at("2024-03-02T00:00:00.000Z"))
        yield* store.update(down)
        expect(yield* store.findLive(old.repo.owner, old.repo.name)).toStrictEqual(Option.none())
        const relisted = aListing({ repo: old.repo })
        yield* store.insert(relisted)
        expect(yield* store.findLive(old.repo.owner, old.repo.name)).toStrictEqual(Option.some(relisted))
        // A taken-down row may be stored beside the live one.
        const archived = takenDown(aListing({ repo: old.repo }), at("2024-03-03T00:00:00.000Z"))
        yield* store.insert(archived)
        expect(yield* store.findById(archived.id)).toStrictEqual(Option.some(archived))
        expect(yield* store.findById(down.id)).toStrictEqual(Option.some(down))
      }))

    it.effect("lets a rule catch LiveListingExists inside a transaction and go on", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const tx = yield* Transactor
        const first = aListing()
        yield* store.insert(first)
        const other = aListing()
        const outcome = yield* tx.withTransaction(Effect.gen(function*() {
          const clash = yield* Effect.either(store.insert(aListing({ repo: first.repo })))
          yield* store.insert(other)
          return clash
        }))
        expect(Either.isLeft(outcome)).toBe(true)
        expect(yield* store.findById(other.id)).toStrictEqual(Option.some(other))
      }))

    it.effect("replaces a listing on update", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const listing = aListing()
        yield* store.insert(listing)
        const changed = new Listing({
          ...listing,
          price: AtomicAmount.make(100_000_000_000n),
          payTo: { base: null, solana: SOLANA_ADDRESS },
          hostPat: SealedSecret.make("v1.b.other"),
          description: null,
          checkoutId: CheckoutId.make(`chk_${unique()}`),
          updatedAt: at("2024-04-01T08:30:00.456Z")
        })
        yield* store.update(changed)
        expect(yield* store.findById(listing.id)).toStrictEqual(Option.some(changed))
      }))

    it.effect("lists an account's listings newest first, taken-down ones only when asked", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const accountId = AccountId.make(`acct_${unique()}`)
        const older = aListing({ accountId, createdAt: at("2024-01-01T00:00:00.000Z") })
        const newer = aListing({ accountId, createdAt: at("2024-02-01T00:00:00.000Z") })
        const gone = takenDown(aListing({ accountId, createdAt: at("2024-03-01T00:00:00.000Z") }), at("2024-03-05T00:00:00.000Z"))
        const foreign = aListing({ accountId: AccountId.make(`acct_${unique()}`) })
        for (const l of [older, newer, gone, foreign]) yield* store.insert(l)
        expect(yield* store.listByAccount(accountId, { includeTakenDown: false })).toStrictEqual([newer, older])
        expect(yield* store.listByAccount(accountId, { includeTakenDown: true })).toStrictEqual([gone, newer, older])
      }))

    it.effect("lists an owner's live listings case-insensitively, newest first", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const owner = `Org-${unique()}`
        const a = aListing({ repo: new RepoRef({ owner, name: "a" }), createdAt: at("2024-01-01T00:00:00.000Z") })
        const b = aListing({ repo: new RepoRef({ owner, name: "b" }), createdAt: at("2024-01-02T00:00:00.000Z") })
        const down = takenDown(aListing({ repo: new RepoRef({ owner, name: "c" }) }), at("2024-01-03T00:00:00.000Z"))
        const longer = aListing({ repo: new RepoRef({ owner: `${owner}-2`, name: "a" }) })
        for (const l of [a, b, down, longer]) yield* store.insert(l)
        expect(yield* store.listLiveByOwner(owner.toUpperCase())).toStrictEqual([b, a])
        expect(yield* store.listLiveByOwner(`nobody-${unique()}`)).toStrictEqual([])
      }))

    it.effect("lists the selling listings only (live, priced, with a payout address), by owner then name, case-insensitively", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const owner = `Sitemap-${unique()}`
        const ref = (o: string, name: string) => new RepoRef({ owner: o, name })
        const updated = at("2024-05-06T07:08:09.123Z")
        const b = aListing({ repo: ref(owner, "b-Repo"), updatedAt: updated })
        const a = aListing({ repo: ref(owner, "A.js"), payTo: { base: null, solana: SOLANA_ADDRESS } })
        const second = aListing({ repo: ref(`${owner.toLowerCase()}-z`, "x") })
        const unpriced = aListing({ repo: ref(owner, "unpriced"), price: null })
        const noWallet = aListing({ repo: ref(owner, "no-wallet"), payTo: { base: null, solana: null } })
        const down = takenDown(aListing({ repo: ref(owner, "down") }), at("2024-01-03T00:00:00.000Z"))
        for (const l of [second, b, unpriced, a, noWallet, down]) yield* store.insert(l)
        const mine = (yield* store.listSelling()).filter((r) => r.owner.toLowerCase().startsWith(owner.toLowerCase()))
        expect(mine).toStrictEqual([
          { owner, name: "A.js", updatedAt: a.updatedAt },
          { owner, name: "b-Repo", updatedAt: updated },
          { owner: second.repo.owner, name: "x", updatedAt: second.updatedAt }
        ])
        // A reprice to nothing or a takedown takes a listing out at once.
        yield* store.update(new Listing({ ...b, price: null }))
        yield* store.update(takenDown(a, at("2024-06-01T00:00:00.000Z")))
        expect((yield* store.listSelling()).filter((r) => r.owner === owner)).toStrictEqual([])
      }))

    it.effect("finds a checkout together with its listing, every field of both intact", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        // Every like-named column differs between the two rows, so a mixed-up join cannot pass.
        const listing = aListing({
          accountId: AccountId.make(`acct_${unique()}`),
          price: BEYOND_DOUBLE,
          payTo: { base: null, solana: SOLANA_ADDRESS },
          isPrivate: true,
          updatedAt: at("2024-03-04T00:00:00.004Z")
        })
        const checkout = aCheckout(listing, {
          id: CheckoutId.make(`chk_${unique()}`),
          repo: new RepoRef({ owner: `Other-${unique()}`, name: "Other" }),
          price: AtomicAmount.make(5n),
          createdAt: at("2024-03-02T00:00:00.002Z"),
          voidedAt: at("2024-03-03T00:00:00.003Z")
        })
        yield* store.insert(listing)
        yield* store.insertCheckout(checkout)
        const found = Option.getOrThrow(yield* store.findCheckoutWithListing(checkout.id))
        expect(found).toStrictEqual({ checkout, listing: Option.some(listing) })
        expect(Option.getOrThrow(found.listing).price).toBe(9_007_199_254_740_993n)
        expect(found.checkout.price).toBe(5n)
        // The plain lookup agrees.
        expect(yield* store.findById(listing.id)).toStrictEqual(found.listing)
      }))

    it.effect("finds a checkout whose listing is not stored with no listing, and an unknown checkout not at all", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const checkout = aCheckout(aListing({ price: null, payTo: { base: null, solana: null }, description: null, language: null }))
        yield* store.insertCheckout(checkout)
        expect(yield* store.findCheckoutWithListing(checkout.id)).toStrictEqual(Option.some({ checkout, listing: Option.none() }))
        expect(yield* store.findCheckoutWithListing(CheckoutId.make(`chk_${unique()}`))).toStrictEqual(Option.none())
      }))

    it.effect("finds a checkout with its listing as stored now: repriced or taken down, voided checkouts too", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const listing = aListing()
        const first = aCheckout(listing)
        yield* store.insert(listing)
        yield* store.insertCheckout(first)
        // A reprice: a new checkout becomes the listing's own, the first is voided.
        const second = aCheckout(listing, { id: CheckoutId.make(`chk_${unique()}`), price: AtomicAmount.make(1n) })
        const repriced = new Listing({ ...listing, price: second.price, checkoutId: second.id, updatedAt: at("2024-03-05T00:00:00.000Z") })
        yield* store.insertCheckout(second)
        yield* store.update(repriced)
        const voidedAt = at("2024-03-05T00:00:00.001Z")
        yield* store.voidCheckout(first.id, voidedAt)
        const old = Option.getOrThrow(yield* store.findCheckoutWithListing(first.id))
        expect(old).toStrictEqual({ checkout: new Checkout({ ...first, voidedAt }), listing: Option.some(repriced) })
        expect(old.checkout.isVoid).toBe(true)
        expect(yield* store.findCheckoutWithListing(second.id)).toStrictEqual(Option.some({ checkout: second, listing: Option.some(repriced) }))
        const down = takenDown(repriced, at("2024-03-06T00:00:00.000Z"))
        yield* store.update(down)
        const gone = Option.getOrThrow(yield* store.findCheckoutWithListing(second.id))
        expect(gone.listing).toStrictEqual(Option.some(down))
        expect(Option.getOrThrow(gone.listing).isLive).toBe(false)
      }))

    it.effect("voids a checkout once: voiding again keeps the first voiding time", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const checkout = aCheckout(aListing())
        yield* store.insertCheckout(checkout)
        const first = at("2024-03-02T00:00:00.001Z")
        yield* store.voidCheckout(checkout.id, first)
        yield* store.voidCheckout(checkout.id, at("2024-03-03T00:00:00.000Z"))
        const { checkout: stored } = Option.getOrThrow(yield* store.findCheckoutWithListing(checkout.id))
        expect(stored.voidedAt).toStrictEqual(first)
        expect(stored.isVoid).toBe(true)
        expect(stored.price).toBe(checkout.price)
        // Voiding an unknown checkout is a no-op.
        yield* store.voidCheckout(CheckoutId.make(`chk_${unique()}`), first)
      }))

    it.effect("findByIdForUpdate reads the listing and holds it until the transaction ends: no update is lost", () =>
      Effect.gen(function*() {
        const store = yield* ListingStore
        const tx = yield* Transactor
        const listing = aListing({ price: AtomicAmount.make(0n) })
        yield* store.insert(listing)
        expect(yield* tx.withTransaction(store.findByIdForUpdate(listing.id))).toStrictEqual(Option.some(listing))
        expect(yield* tx.withTransaction(store.findByIdForUpdate(ListingId.make(`lst_${unique()}`)))).toStrictEqual(Option.none())
        // 20 concurrent read-modify-writes, each adding one to the price: all 20 count.
        yield* Effect.forEach(Array.from({ length: 20 }), () =>
          tx.withTransaction(Effect.gen(function*() {
            const current = Option.getOrThrow(yield* store.findByIdForUpdate(listing.id))
            yield* Effect.yieldNow()
            yield* store.update(new Listing({ ...current, price: AtomicAmount.make(current.price! + 1n) }))
          })), { concurrency: "unbounded", discard: true })
        expect(Option.getOrThrow(yield* store.findById(listing.id)).price).toBe(20n)
      }))
  })

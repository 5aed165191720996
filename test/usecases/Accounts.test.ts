/*
 * Accounts on memory adapters (issue 28): `get` and `patch` called as Effects over memoryPorts (memory
 * storage and outbox, seeded memory code host, the test SecretBox, the HTTP webhook sender's target policy on
 * IP literals, so nothing resolves or connects), answers and stored accounts, listings and checkouts asserted.
 * Beside test/http/account.test.ts and test/http/payout.test.ts. API keys are Auth's (see Auth.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { webhookSecretAad } from "../../domain/Account.js"
import type { AccountId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { Accounts, type AccountPatchInput } from "../../domain/usecases/Accounts.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Outbox } from "../../ports/Outbox.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { anEvent } from "../../testing/Fixtures.js"
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
  storedAccount
} from "./memoryApp.js"

const HOOK = "https://1.1.1.1/hooks/repomarket"
const OTHER_HOOK = "https://8.8.8.8/hooks/repomarket"
const BAD_CHECKSUM = BASE_WALLET.replace("fCD6", "FCD6")

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(Effect.zipRight(atNow, effect), memoryApp()) as Effect.Effect<A, E>

type Principal = Parameters<Accounts["get"]>[0]
const patch = (principal: Principal, input: AccountPatchInput) => Effect.flatMap(Accounts, (a) => a.patch(principal, input))
const fieldsOf = (error: unknown) => ((error as { errors?: ReadonlyArray<{ field: string }> }).errors ?? []).map((e) => e.field)
const list = (principal: Principal, host_url: string, extra: Record<string, string> = {}) =>
  Effect.flatMap(Listings, (l) =>
    l.create({ host_url, ...extra, ...(extra["host_pat"] === undefined ? {} : { host_pat: Redacted.make(extra["host_pat"]) }) }, principal, "203.0.113.1"))
const byId = (listing: Listing) => Effect.map(Effect.flatMap(ListingStore, (s) => s.findById(listing.id)), Option.getOrThrow)
const checkoutOf = (id: Listing["checkoutId"]) =>
  Effect.map(Effect.flatMap(ListingStore, (s) => s.findCheckoutWithListing(id)), (found) => Option.getOrThrow(found).checkout)

describe("Accounts.get", () => {
  it.effect("a credential whose account no longer exists is Unauthenticated, for get and for patch (nothing is created)", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const ghost = { ...principal, accountId: "acct_gone" as AccountId } as Principal
      expect(brief(yield* failureOf(Effect.flatMap(Accounts, (a) => a.get(ghost))))).toMatchObject({ _tag: "Unauthenticated" })
      expect(brief(yield* failureOf(patch(ghost, { storefront_tagline: "hello" })))).toMatchObject({ _tag: "Unauthenticated" })
    })))
})

describe("Accounts.patch: storefront tagline", () => {
  it.effect("140 code points are saved (an emoji counts once); 141, a line break or a control character are InvalidInput naming storefront_tagline and the saved one stays", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const longest = "🦀".repeat(140)
      expect((yield* patch(principal, { storefront_tagline: longest })).account.storefrontTagline).toBe(longest)
      for (const tagline of ["a".repeat(141), "two\nlines", "bell\u0007", "sep\u2028arated"]) {
        const error = yield* failureOf(patch(principal, { storefront_tagline: tagline }))
        expect({ tagline, tag: error._tag, fields: fieldsOf(error) }).toEqual({ tagline, tag: "InvalidInput", fields: ["storefront_tagline"] })
      }
      expect((yield* storedAccount(account.id)).storefrontTagline).toBe(longest)
    })))

  it.effect("absent keeps the tagline, a new value replaces it, \"\" clears it", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      yield* patch(principal, { storefront_tagline: "first" })
      yield* patch(principal, { wallet_base: BASE_WALLET })
      expect((yield* storedAccount(account.id)).storefrontTagline).toBe("first")
      yield* patch(principal, { storefront_tagline: "second" })
      expect((yield* storedAccount(account.id)).storefrontTagline).toBe("second")
      yield* patch(principal, { storefront_tagline: "" })
      expect((yield* storedAccount(account.id)).storefrontTagline).toBeNull()
    })))

  it.effect("one bad field refuses the whole patch: a bad wallet with a good tagline and webhook saves neither (InvalidInput names only the bad field)", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const error = yield* failureOf(patch(principal, { wallet_base: BAD_CHECKSUM, storefront_tagline: "not saved", webhook_url: HOOK }))
      expect(fieldsOf(error)).toEqual(["wallet_base"])
      const stored = yield* storedAccount(account.id)
      expect(stored).toMatchObject({ storefrontTagline: null, webhookUrl: null, webhookSecret: null })
      expect(stored.wallets).toEqual({ base: null, solana: null })
    })))
})

describe("Accounts.patch: webhook", () => {
  it.effect("setting webhook_url shows a whsec_ secret in that answer only; it is stored sealed, bound to the account; later patches and get never show it", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const other = yield* signedIn()
      const set = yield* patch(principal, { webhook_url: HOOK })
      expect(set.account.webhookUrl).toBe(HOOK)
      const secret = Redacted.value(set.webhookSecret!)
      expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
      expect(shown(set.account)).not.toContain(secret)

      const stored = yield* storedAccount(account.id)
      expect(shown(stored)).not.toContain(secret)
      const box = yield* SecretBox
      expect(Redacted.value(yield* box.open(stored.webhookSecret!, webhookSecretAad(stored)))).toBe(secret)
      // Sealed for this account: copied onto another account it does not open.
      expect((yield* Effect.flip(box.open(stored.webhookSecret!, webhookSecretAad(other.account))))._tag).toBe("SecretBoxError")

      const later = yield* patch(principal, { storefront_tagline: "hooked" })
      expect(later.webhookSecret).toBeNull()
      expect(later.account.webhookUrl).toBe(HOOK)
      expect(later.account.webhookSecret).toBe(stored.webhookSecret)
      expect(shown(later)).not.toContain(secret)
      expect(shown(yield* Effect.flatMap(Accounts, (a) => a.get(principal)))).not.toContain(secret)
    })))

  it.effect("every time webhook_url is set a new secret replaces the old one, even for the same URL", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const first = Redacted.value((yield* patch(principal, { webhook_url: HOOK })).webhookSecret!)
      const again = Redacted.value((yield* patch(principal, { webhook_url: HOOK })).webhookSecret!)
      const moved = yield* patch(principal, { webhook_url: OTHER_HOOK })
      expect(again).not.toBe(first)
      expect([first, again]).not.toContain(Redacted.value(moved.webhookSecret!))
      expect(moved.account.webhookUrl).toBe(OTHER_HOOK)
    })))

  it.effect("loopback, private, metadata, plain-http and credentialed targets are InvalidInput naming webhook_url; the saved URL and secret stay", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      yield* patch(principal, { webhook_url: HOOK })
      const before = yield* storedAccount(account.id)
      for (const url of ["http://1.1.1.1/hook", "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/hook", "https://user:pw@1.1.1.1/hook", "https://1.1.1.1/hook#frag", "ftp://1.1.1.1/"]) {
        const error = yield* failureOf(patch(principal, { webhook_url: url }))
        expect({ url, tag: error._tag, fields: fieldsOf(error) }).toEqual({ url, tag: "InvalidInput", fields: ["webhook_url"] })
      }
      const after = yield* storedAccount(account.id)
      expect(after).toMatchObject({ webhookUrl: HOOK, webhookSecret: before.webhookSecret })
    })))

  it.effect("\"\" removes the webhook and its secret, shows no secret, and cancels the account's pending events (not other accounts')", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const other = yield* signedIn()
      yield* patch(principal, { webhook_url: HOOK })
      const outbox = yield* Outbox
      const mine = anEvent({ accountId: account.id })
      const theirs = anEvent({ accountId: other.account.id })
      yield* outbox.enqueue(mine)
      yield* outbox.enqueue(theirs)
      const cleared = yield* patch(principal, { webhook_url: "" })
      expect(cleared.webhookSecret).toBeNull()
      expect(yield* storedAccount(account.id)).toMatchObject({ webhookUrl: null, webhookSecret: null })
      expect(Option.getOrThrow(yield* outbox.findById(mine.id)).status).toBe("cancelled")
      expect(Option.getOrThrow(yield* outbox.findById(theirs.id)).status).toBe("pending")
    })))
})

describe("Accounts.patch: default wallets", () => {
  it.effect("addresses are validated per chain and stored checksummed; a bad checksum or a short Solana key is InvalidInput naming that field and nothing changes", () =>
    run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const set = yield* patch(principal, { wallet_base: BASE_WALLET.toLowerCase(), wallet_solana: SOLANA_WALLET })
      expect(set.account.wallets).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })
      expect(fieldsOf(yield* failureOf(patch(principal, { wallet_base: BAD_CHECKSUM })))).toEqual(["wallet_base"])
      expect(fieldsOf(yield* failureOf(patch(principal, { wallet_solana: SOLANA_WALLET.slice(0, -2) })))).toEqual(["wallet_solana"])
      expect((yield* storedAccount(account.id)).wallets).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })
    })))

  it.effect("a wallet added for a chain fills that chain on the account's priced live listings lacking it and rebuilds their checkouts; listings with an address keep it", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const lacking = yield* list(principal, "https://github.com/Octo-Org/Widget", { price_usd: "1.00", wallet_solana: SOLANA_WALLET })
      const carrying = yield* list(principal, "https://github.com/Octo-Org/Gadget", { price_usd: "2.00", wallet_base: BASE_WALLET_2 })
      const result = yield* patch(principal, { wallet_base: BASE_WALLET })
      expect(result.listingsSkipped).toEqual([])

      const filled = yield* byId(lacking)
      expect(filled.payTo).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })
      expect(filled.checkoutId).not.toBe(lacking.checkoutId)
      expect((yield* checkoutOf(lacking.checkoutId)).voidedAt).not.toBeNull()
      expect((yield* checkoutOf(filled.checkoutId)).payTo).toEqual({ base: BASE_WALLET, solana: SOLANA_WALLET })

      const kept = yield* byId(carrying)
      expect(kept.payTo.base).toBe(BASE_WALLET_2)
      expect(kept.checkoutId).toBe(carrying.checkoutId)
    })))

  it.effect("listings that cannot take the new wallet are reported, not rebuilt: unpriced (not_priced), a revoked private token (host_unreachable), taken down", () =>
    run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const unpriced = yield* list(principal, "https://github.com/Octo-Org/Widget", { wallet_solana: SOLANA_WALLET })
      const revoked = yield* list(principal, "https://github.com/Octo-Org/Secret", { price_usd: "3.00", wallet_solana: SOLANA_WALLET, host_pat: SECRET_TOKEN })
      const gone = yield* list(principal, "https://github.com/Octo-Org/Gadget", { price_usd: "4.00", wallet_solana: SOLANA_WALLET })
      yield* Effect.flatMap(Listings, (l) => l.takedown("Octo-Org", "Gadget", principal))
      // The seller's token no longer reads the repo.
      yield* Effect.flatMap(CodeHostMemoryControl, (c) => c.put({ ...SECRET, token: "ghp_rotated" }))

      const result = yield* patch(principal, { wallet_base: BASE_WALLET })
      expect(result.account.wallets.base).toBe(BASE_WALLET)
      expect([...result.listingsSkipped].map((s) => [s.repo, s.reason]).sort()).toEqual([
        ["Octo-Org/Gadget", "taken_down"],
        ["Octo-Org/Secret", "host_unreachable"],
        ["Octo-Org/Widget", "not_priced"]
      ])
      for (const listing of [unpriced, revoked]) {
        const stored = yield* byId(listing)
        expect({ repo: stored.repo.slug, base: stored.payTo.base, checkout: stored.checkoutId }).toEqual({ repo: listing.repo.slug, base: null, checkout: listing.checkoutId })
      }
      expect(yield* byId(gone)).toMatchObject({ status: "taken_down" })
      expect((yield* byId(gone)).payTo.base).toBeNull()
    })))

  it.effect("another account's listings lacking the chain are never filled with this account's wallet", () =>
    run(Effect.gen(function*() {
      const mine = yield* signedIn()
      const theirs = yield* signedIn()
      const their = yield* list(theirs.principal, "https://github.com/Octo-Org/Widget", { price_usd: "1.00", wallet_solana: SOLANA_WALLET })
      yield* patch(mine.principal, { wallet_base: BASE_WALLET })
      const stored = yield* byId(their)
      expect(stored.payTo.base).toBeNull()
      expect(stored.checkoutId).toBe(their.checkoutId)
    })))
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import {
  BASE_WALLET,
  BASE_WALLET_2,
  call,
  PRIVATE_REPO,
  PRIVATE_TOKEN,
  signInWithKey,
  SOLANA_WALLET,
  SOLANA_WALLET_2,
  TestApp
} from "../support/app.js"
import {
  expectCurrent,
  expectGone,
  GADGET_URL,
  listed,
  repoPage,
  SECRET_URL,
  storesOf,
  WIDGET_URL
} from "../support/flows.js"

describe("wallet precedence (rules 2 and 6)", () => {
  layer(TestApp())((it) => {
    it.effect("a wallet named on the listing wins over the account default, and is what the listing shows", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("precedence@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET } })
        // Sent lower-case: the listing shows (and pays) the checksummed form of its own address.
        const created = yield* listed({ host_url: WIDGET_URL, price_usd: "4.00", wallet_base: BASE_WALLET_2.toLowerCase() }, key)
        expect(created.note).toBe("On sale for 4.00 USDC on Base and Solana.")
        expect((yield* storesOf(key))["Octo-Org/Widget"]).toMatchObject({
          wallet_base: BASE_WALLET_2,
          wallet_solana: SOLANA_WALLET,
          chains: ["base", "solana"]
        })
      }))

    it.effect("clearing the listing's own wallet with \"\" falls back to the account default", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("precedence@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET } })
        yield* listed({ host_url: WIDGET_URL, price_usd: "4.00", wallet_base: BASE_WALLET_2 }, key)
        const before = (yield* storesOf(key))["Octo-Org/Widget"]
        const cleared = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { wallet_base: "" } })
        expect(cleared.status).toBe(200)
        expect(cleared.json).toMatchObject({ wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET, price_usd: "4.00", selling: true })
        yield* expectGone(before.checkout_url, "/r/Octo-Org/Widget")
        yield* expectCurrent(cleared.json.checkout_url)
      }).pipe(Effect.provide(TestApp()))) // its own listing in its own app

    it.effect("clearing a wallet for a chain with no account default leaves that chain off", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("no-solana-default@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET } })
        yield* listed({ host_url: GADGET_URL, price_usd: "4.00", wallet_solana: SOLANA_WALLET_2 }, key)
        const cleared = yield* call("PATCH", "/repos/Octo-Org/Gadget", { token: key, body: { wallet_solana: "" } })
        expect(cleared.json).toMatchObject({ wallet_base: BASE_WALLET, wallet_solana: null, chains: ["base"] })
      }))
  })
})

describe("anonymous listings (rule 2)", () => {
  layer(TestApp())((it) => {
    it.effect("never get an account default, even when the same person has an account with defaults", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("also-anonymous@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET } })

        // No Authorization header: nothing proves who this is.
        const anonymous = yield* listed({ host_url: WIDGET_URL, price_usd: "8.00" })
        expect(anonymous.selling).toBe(false)
        expect(anonymous.note).toBe("Not selling: add a payout wallet (wallet_base or wallet_solana).")
        expect((yield* repoPage("Octo-Org", "Widget")).json).toMatchObject({ selling: false, chains: [] })
        expect(yield* storesOf(key)).toEqual({})

        // A later wallet addition on the account does not reach it either.
        const added = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET_2 } })
        expect(added.json.listings_skipped).toBeUndefined()
        yield* expectCurrent(anonymous.checkout_url, { selling: false })
        expect((yield* repoPage("Octo-Org", "Widget")).json).toMatchObject({ selling: false, chains: [] })
      }))

    it.effect("sell on exactly the wallets they name", () =>
      Effect.gen(function*() {
        const anonymous = yield* listed({ host_url: GADGET_URL, price_usd: "8.00", wallet_solana: SOLANA_WALLET_2 })
        expect(anonymous).toMatchObject({ selling: true, note: "On sale for 8.00 USDC on Solana." })
        expect((yield* repoPage("Octo-Org", "Gadget")).json).toMatchObject({ selling: true, chains: ["solana"] })
      }))
  })
})

describe("adding an account wallet rebuilds checkouts (state table)", () => {
  layer(TestApp())((it) => {
    it.effect("rebuilds exactly the listings lacking the chain; reports the others in listings_skipped", () =>
      Effect.gen(function*() {
        const host = yield* CodeHostMemoryControl
        for (const name of ["Unpriced", "Gone", "Retired"]) yield* host.put({ owner: "Octo-Org", name })
        const { key } = yield* signInWithKey("rebuild@example.com")
        const list = (body: Record<string, unknown>) => listed(body, key)

        // Carries a Base address of its own: lacks only Solana.
        const widget = yield* list({ host_url: WIDGET_URL, price_usd: "10.00", wallet_base: BASE_WALLET_2 })
        // Lacks Base: will be rebuilt.
        const gadget = yield* list({ host_url: GADGET_URL, price_usd: "10.00", wallet_solana: SOLANA_WALLET_2 })
        // Lacks Base, each with a reason it cannot take it.
        const unpriced = yield* list({ host_url: "https://github.com/octo-org/unpriced", wallet_solana: SOLANA_WALLET_2 })
        const gone = yield* list({ host_url: "https://github.com/octo-org/gone", price_usd: "10.00", wallet_solana: SOLANA_WALLET_2 })
        const secret = yield* list({ host_url: SECRET_URL, price_usd: "10.00", wallet_solana: SOLANA_WALLET_2, host_pat: PRIVATE_TOKEN })
        yield* list({ host_url: "https://github.com/octo-org/retired", price_usd: "10.00", wallet_solana: SOLANA_WALLET_2 })
        expect((yield* call("DELETE", "/repos/Octo-Org/Retired", { token: key })).status).toBe(204)
        // The repo disappears from the code host; the private repo's token is revoked (a new one replaces it).
        yield* host.remove("Octo-Org", "Gone")
        yield* host.put({ ...PRIVATE_REPO, token: ["github", "pat", "new", "owner", "token"].join("_") })

        const added = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET } })
        expect(added.status).toBe(200)
        expect(added.json.wallet_base).toBe(BASE_WALLET)
        const bySlug = (a: { repo: string }, b: { repo: string }) => a.repo.localeCompare(b.repo)
        expect([...added.json.listings_skipped].sort(bySlug)).toEqual([
          { repo: "octo-org/secret-sauce", reason: "host_unreachable" },
          { repo: "Octo-Org/Gone", reason: "host_unreachable" },
          { repo: "Octo-Org/Retired", reason: "taken_down" },
          { repo: "Octo-Org/Unpriced", reason: "not_priced" }
        ].sort(bySlug))

        const stores = yield* storesOf(key)
        // Rebuilt: pays the newly saved Base address, keeps its own Solana one, new checkout.
        expect(stores["Octo-Org/Gadget"]).toMatchObject({ wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET_2, chains: ["base", "solana"] })
        expect(stores["Octo-Org/Gadget"].checkout_url).not.toBe(gadget.checkout_url)
        yield* expectGone(gadget.checkout_url, "/r/Octo-Org/Gadget")
        yield* expectCurrent(stores["Octo-Org/Gadget"].checkout_url)
        // Already carried a Base address: untouched, same checkout.
        expect(stores["Octo-Org/Widget"]).toMatchObject({ wallet_base: BASE_WALLET_2, wallet_solana: null, checkout_url: widget.checkout_url })
        yield* expectCurrent(widget.checkout_url)
        // Skipped: not rebuilt, their checkouts stand.
        for (const [slug, created] of [["Octo-Org/Unpriced", unpriced], ["Octo-Org/Gone", gone], ["octo-org/secret-sauce", secret]] as const) {
          expect({ slug, wallet_base: stores[slug].wallet_base, checkout_url: stores[slug].checkout_url })
            .toEqual({ slug, wallet_base: null, checkout_url: created.checkout_url })
          yield* expectCurrent(created.checkout_url, { selling: created.selling })
        }
      }))

    it.effect("carried addresses never move when the account default later changes", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("rebuild@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET } })
        yield* listed({ host_url: WIDGET_URL, price_usd: "10.00", wallet_base: BASE_WALLET_2 }, key)
        yield* listed({ host_url: GADGET_URL, price_usd: "10.00", wallet_solana: SOLANA_WALLET_2 }, key)
        const before = yield* storesOf(key)
        const changed = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET_2 } })
        expect(changed.json.wallet_base).toBe(BASE_WALLET_2)
        const after = yield* storesOf(key)
        // Gadget took BASE_WALLET when it was the default; it keeps it, with the same checkout.
        expect(after["Octo-Org/Gadget"]).toMatchObject({ wallet_base: BASE_WALLET, checkout_url: before["Octo-Org/Gadget"].checkout_url })
        expect(after["Octo-Org/Widget"]).toEqual(before["Octo-Org/Widget"])
        yield* expectCurrent(before["Octo-Org/Gadget"].checkout_url)
        // A listing made now takes the new default.
        yield* Effect.flatMap(CodeHostMemoryControl, (host) => host.put({ owner: "Octo-Org", name: "Fresh" }))
        yield* listed({ host_url: "https://github.com/octo-org/fresh", price_usd: "1.00" }, key)
        expect((yield* storesOf(key))["Octo-Org/Fresh"]).toMatchObject({ wallet_base: BASE_WALLET_2, wallet_solana: null })
      }).pipe(Effect.provide(TestApp()))) // its own listings in its own app

    it.effect("a wallet for the other chain rebuilds the listings lacking that one; with none skipped, no listings_skipped", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("rebuild@example.com")
        // Only the widget lacks Solana, and it can take it.
        yield* listed({ host_url: WIDGET_URL, price_usd: "10.00", wallet_base: BASE_WALLET_2 }, key)
        yield* listed({ host_url: GADGET_URL, price_usd: "10.00", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET_2 }, key)
        const before = yield* storesOf(key)
        const added = yield* call("PATCH", "/my/account", { token: key, body: { wallet_solana: SOLANA_WALLET } })
        expect(added.status).toBe(200)
        expect("listings_skipped" in added.json).toBe(false)
        const after = yield* storesOf(key)
        const rebuilt = Object.keys(after).filter((slug) => after[slug].checkout_url !== before[slug].checkout_url)
        expect(rebuilt).toEqual(["Octo-Org/Widget"])
        expect(after["Octo-Org/Widget"]).toMatchObject({ wallet_base: BASE_WALLET_2, wallet_solana: SOLANA_WALLET, chains: ["base", "solana"] })
        yield* expectGone(before["Octo-Org/Widget"].checkout_url, "/r/Octo-Org/Widget")
        for (const slug of Object.keys(after).filter((s) => s !== "Octo-Org/Widget")) {
          expect({ slug, wallet_solana: after[slug].wallet_solana }).toEqual({ slug, wallet_solana: SOLANA_WALLET_2 })
        }
      }).pipe(Effect.provide(TestApp()))) // its own listings in its own app

    it.effect("a patch that adds no wallet rebuilds nothing", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("rebuild@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET } })
        yield* listed({ host_url: WIDGET_URL, price_usd: "10.00" }, key)
        yield* listed({ host_url: GADGET_URL, price_usd: "10.00", wallet_base: BASE_WALLET_2 }, key)
        const before = yield* storesOf(key)
        const patched = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "Widgets and more", wallet_base: "" } })
        expect(patched.json).toMatchObject({ storefront_tagline: "Widgets and more", wallet_base: null, wallet_solana: SOLANA_WALLET })
        expect("listings_skipped" in patched.json).toBe(false)
        // Clearing the default does not move what listings carry.
        expect(yield* storesOf(key)).toEqual(before)
      }).pipe(Effect.provide(TestApp()))) // its own listings in its own app
  })
})

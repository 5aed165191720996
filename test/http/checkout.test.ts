import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import {
  BASE_URL,
  BASE_WALLET,
  call,
  checkoutIdOf,
  signInWithKey,
  SOLANA_WALLET,
  SOLANA_WALLET_2,
  TestApp
} from "../support/app.js"
import {
  expectCurrent,
  expectGone,
  expectProblem,
  getCheckout,
  listed,
  repoPage,
  storesOf,
  WIDGET_URL
} from "../support/flows.js"

const CHECKOUT_URL = new RegExp(`^${BASE_URL.replace(/\./g, "\\.")}/checkout/([A-Za-z0-9_]{16,64})$`)

describe("checkout URLs", () => {
  layer(TestApp())((it) => {
    it.effect("checkout_url and test_checkout_url are absolute on BASE_URL: /checkout/<id> and /checkout/<id>/test", () =>
      Effect.gen(function*() {
        const created = yield* listed({ host_url: WIDGET_URL, price_usd: "9.99", wallet_base: BASE_WALLET })
        expect(created.checkout_url).toMatch(CHECKOUT_URL)
        expect(created.test_checkout_url).toBe(`${created.checkout_url}/test`)
        // A current checkout is neither gone nor unknown (it answers 501 until payments land).
        yield* expectCurrent(created.checkout_url)
        yield* expectCurrent(created.test_checkout_url)
        const page = yield* repoPage("Octo-Org", "Widget")
        expect(page.json.checkout_url).toBe(created.checkout_url)
        expect(page.json.test_checkout_url).toBe(created.test_checkout_url)
      }))

    it.effect("an unknown checkout id is 404", () =>
      Effect.gen(function*() {
        expectProblem(yield* getCheckout(`${BASE_URL}/checkout/chk_doesnotexist`), 404, "not_found")
        expectProblem(yield* getCheckout(`${BASE_URL}/checkout/chk_doesnotexist/test`), 404, "not_found")
      }))
  })
})

describe("reprice (PATCH /repos/<owner>/<repo>)", () => {
  layer(TestApp())((it) => {
    it.effect("voids the old checkout (410 pointing to the repo page) and mints a new one", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("reprice@example.com")
        const created = yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, key)
        const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "20.00" } })
        expect(repriced.status).toBe(200)
        expect(repriced.json.price_usd).toBe("20.00")
        expect(repriced.json.checkout_url).toMatch(CHECKOUT_URL)
        expect(checkoutIdOf(repriced.json.checkout_url)).not.toBe(checkoutIdOf(created.checkout_url))
        expect(repriced.json.test_checkout_url).toBe(`${repriced.json.checkout_url}/test`)

        yield* expectGone(created.checkout_url, "/r/Octo-Org/Widget")
        yield* expectGone(created.test_checkout_url, "/r/Octo-Org/Widget")
        yield* expectCurrent(repriced.json.checkout_url)
        yield* expectCurrent(repriced.json.test_checkout_url)
        // The repo page now hands out the new checkout.
        expect((yield* repoPage("octo-org", "widget")).json.checkout_url).toBe(repriced.json.checkout_url)
      }))

    it.effect("only the sent fields change", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("only-sent@example.com")
        yield* listed(
          { host_url: "https://github.com/octo-org/gadget", price_usd: "10.00", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET },
          key
        )
        const price = yield* call("PATCH", "/repos/Octo-Org/Gadget", { token: key, body: { price_usd: "15.50" } })
        expect(price.json).toMatchObject({ price_usd: "15.50", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET, chains: ["base", "solana"] })

        const wallet = yield* call("PATCH", "/repos/Octo-Org/Gadget", { token: key, body: { wallet_solana: SOLANA_WALLET_2 } })
        expect(wallet.json).toMatchObject({ price_usd: "15.50", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET_2 })
        // A wallet change is a new checkout too: money must not go to the old address through an old link.
        yield* expectGone(price.json.checkout_url, "/r/Octo-Org/Gadget")

        const stored = (yield* storesOf(key))["Octo-Org/Gadget"]
        expect(stored).toMatchObject({
          price_usd: "15.50",
          wallet_base: BASE_WALLET,
          wallet_solana: SOLANA_WALLET_2,
          selling: true,
          checkout_url: wallet.json.checkout_url
        })
      }))

    it.effect("every rebuild mints a fresh checkout id; only the latest is current", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("many-rebuilds@example.com")
        yield* Effect.flatMap(CodeHostMemoryControl, (host) => host.put({ owner: "Octo-Org", name: "Rebuilt" }))
        const urls = [(yield* listed({ host_url: "https://github.com/octo-org/rebuilt", price_usd: "1.00", wallet_base: BASE_WALLET }, key)).checkout_url]
        // The same price again still rebuilds: a PATCH always leaves the buyer a checkout for the current terms.
        for (const price of ["2.00", "3.00", "3.00"]) {
          const patched = yield* call("PATCH", "/repos/Octo-Org/Rebuilt", { token: key, body: { price_usd: price } })
          urls.push(patched.json.checkout_url)
        }
        expect(new Set(urls.map(checkoutIdOf)).size).toBe(urls.length)
        for (const url of urls.slice(0, -1)) yield* expectGone(url, "/r/Octo-Org/Rebuilt")
        yield* expectCurrent(urls.at(-1)!)
      }))
  })
})

describe("takedown (DELETE /repos/<owner>/<repo>)", () => {
  layer(TestApp())((it) => {
    it.effect("204; the checkout is void, the repo page is 404 and the inventories drop it", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("takedown@example.com")
        const widget = yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, key)
        yield* listed({ host_url: "https://github.com/octo-org/gadget", price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        expect((yield* call("GET", "/r/Octo-Org")).json.inventory.map((i: any) => i.repo).sort())
          .toEqual(["Octo-Org/Gadget", "Octo-Org/Widget"])

        const deleted = yield* call("DELETE", "/repos/octo-org/WIDGET", { token: key })
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")

        yield* expectGone(widget.checkout_url, "/r/Octo-Org/Widget")
        yield* expectGone(widget.test_checkout_url, "/r/Octo-Org/Widget")
        expectProblem(yield* repoPage("Octo-Org", "Widget"), 404, "not_found")
        expect(Object.keys(yield* storesOf(key))).toEqual(["Octo-Org/Gadget"])
        const owner = yield* call("GET", "/r/Octo-Org")
        expect(owner.json.inventory.map((i: any) => i.repo)).toEqual(["Octo-Org/Gadget"])
        // No longer for sale, it is one of the owner's free public repos again.
        expect(owner.json.indexed.map((i: any) => i.repo)).toContain("Octo-Org/Widget")

        // Gone means gone for its owner too.
        expectProblem(yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "1.00" } }), 404, "not_found")
        expectProblem(yield* call("DELETE", "/repos/Octo-Org/Widget", { token: key }), 404, "not_found")
      }))

  })

  // An app of its own: the test above lists the same repo, in whichever order the two run.
  layer(TestApp())((it) => {
    it.effect("the repo can be listed again afterwards, by anyone, with a new checkout", () =>
      Effect.gen(function*() {
        const first = yield* signInWithKey("first-lister@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, first.key)
        expect((yield* call("DELETE", "/repos/Octo-Org/Widget", { token: first.key })).status).toBe(204)
        const { key } = yield* signInWithKey("relister@example.com")
        const before = (yield* call("GET", "/r/Octo-Org")).json.indexed.length
        const again = yield* listed({ host_url: WIDGET_URL, price_usd: "7.00", wallet_base: BASE_WALLET }, key)
        expect(again.selling).toBe(true)
        yield* expectCurrent(again.checkout_url)
        const page = yield* repoPage("Octo-Org", "Widget")
        expect(page.status).toBe(200)
        expect(page.json).toMatchObject({ price_usd: "7.00", checkout_url: again.checkout_url })
        expect(Object.keys(yield* storesOf(key))).toEqual(["Octo-Org/Widget"])
        expect((yield* call("GET", "/r/Octo-Org")).json.indexed.length).toBe(before - 1)
      }))
  })
})

// The state table's last row, sale pending → settled (recorded, on the dashboard, sale.settled sent), is proven
// through real payments in test/http/purchase-*.test.ts and test/webhooks/signature.test.ts.

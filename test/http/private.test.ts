import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, call, PRIVATE_REPO, PRIVATE_TOKEN, signInWithKey, TestApp } from "../support/app.js"
import { expectCurrent, expectGone, expectProblem, listed, listRepo, repoPage, SECRET_URL, storesOf } from "../support/flows.js"

const WRONG_TOKEN = ["github", "pat", "wrong", "9876543210"].join("_")

/** Runs a test in an app of its own, so "nothing is stored" cannot see another test's listing. */
const inItsOwnApp = <A, E, R>(test: Effect.Effect<A, E, R>) => test.pipe(Effect.provide(TestApp()))

/** The private repo listed at 50.00 with its working token by private-b, in an app of the test's own. */
const onItsOwnPrivateListing = <A, E, R>(test: (key: string) => Effect.Effect<A, E, R>) =>
  inItsOwnApp(Effect.gen(function*() {
    const { key } = yield* signInWithKey("private-b@example.com")
    yield* listed({ host_url: SECRET_URL, price_usd: "50.00", wallet_base: BASE_WALLET, host_pat: PRIVATE_TOKEN }, key)
    return yield* test(key)
  }))

describe("private repositories (rule 3)", () => {
  layer(TestApp())((it) => {
    it.effect("without host_pat: 422 private_repo_needs_token, and nothing is stored", () =>
      inItsOwnApp(Effect.gen(function*() {
        const { key } = yield* signInWithKey("private-a@example.com")
        const refused = yield* listRepo({ host_url: SECRET_URL, price_usd: "50.00", wallet_base: BASE_WALLET }, key)
        expectProblem(refused, 422, "private_repo_needs_token")
        expectProblem(yield* repoPage("octo-org", "secret-sauce"), 404, "not_found")
        expect(yield* storesOf(key)).toEqual({})
      })))

    it.effect("with a token the code host rejects: 422 token_rejected, and nothing is stored", () =>
      inItsOwnApp(Effect.gen(function*() {
        const { key } = yield* signInWithKey("private-a@example.com")
        const refused = yield* listRepo({ host_url: SECRET_URL, price_usd: "50.00", wallet_base: BASE_WALLET, host_pat: WRONG_TOKEN }, key)
        expectProblem(refused, 422, "token_rejected")
        expect(refused.text).not.toContain(WRONG_TOKEN)
        expectProblem(yield* repoPage("octo-org", "secret-sauce"), 404, "not_found")
        expect(yield* storesOf(key)).toEqual({})
      })))

    it.effect("after those refusals the repo lists fine (here by another account), with its token", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("private-b@example.com")
        const created = yield* listed({ host_url: SECRET_URL, price_usd: "50.00", wallet_base: BASE_WALLET, host_pat: PRIVATE_TOKEN }, key)
        expect(created).toMatchObject({ repo: "octo-org/secret-sauce", page: "/r/octo-org/secret-sauce", selling: true })
        yield* expectCurrent(created.checkout_url)
        expect((yield* storesOf(key))["octo-org/secret-sauce"]).toMatchObject({ private: true, has_host_pat: true })

        // The stored token is what lets the public page preview a private repo.
        const page = yield* repoPage("Octo-Org", "Secret-Sauce")
        expect(page.status).toBe(200)
        expect(page.json).toMatchObject({
          repo: "octo-org/secret-sauce",
          private: true,
          preview_available: true,
          readme: { path: "README.md", markdown: "# Secret" }
        })
        expect(page.json.tree.entries.map((e: any) => e.path)).toEqual(["README.md"])
      }))

    it.effect("the owner re-listing without host_pat keeps the stored token (absent keeps)", () =>
      onItsOwnPrivateListing((key) => Effect.gen(function*() {
        const before = (yield* storesOf(key))["octo-org/secret-sauce"]
        const again = yield* listed({ host_url: SECRET_URL, price_usd: "60.00" }, key)
        expect(again.selling).toBe(true)
        yield* expectGone(before.checkout_url, "/r/octo-org/secret-sauce")
        expect((yield* storesOf(key))["octo-org/secret-sauce"]).toMatchObject({ price_usd: "60.00", has_host_pat: true })
        expect((yield* repoPage("octo-org", "secret-sauce")).json.preview_available).toBe(true)
      })))

    it.effect("a new host_pat on PATCH must work before it replaces the stored one", () =>
      onItsOwnPrivateListing((key) => Effect.gen(function*() {
        const before = (yield* storesOf(key))["octo-org/secret-sauce"]
        const refused = yield* call("PATCH", "/repos/octo-org/secret-sauce", { token: key, body: { host_pat: WRONG_TOKEN, price_usd: "1.00" } })
        expectProblem(refused, 422, "token_rejected")
        // Nothing changed: same price, same checkout, and the stored token still reads the repo.
        expect((yield* storesOf(key))["octo-org/secret-sauce"]).toEqual(before)
        yield* expectCurrent(before.checkout_url)
        expect((yield* repoPage("octo-org", "secret-sauce")).json.preview_available).toBe(true)
      })))

    it.effect("a rotated token sent with PATCH is stored and used from then on", () =>
      onItsOwnPrivateListing((key) => Effect.gen(function*() {
        const rotated = ["github", "pat", "rotated", "1111111111"].join("_")
        yield* Effect.flatMap(CodeHostMemoryControl, (host) => host.put({ ...PRIVATE_REPO, token: rotated }))
        // The old token no longer reads the repo: the page still shows the listing, without a preview.
        expect((yield* repoPage("octo-org", "secret-sauce")).json).toMatchObject({ preview_available: false, tree: null })

        const patched = yield* call("PATCH", "/repos/octo-org/secret-sauce", { token: key, body: { host_pat: rotated } })
        expect(patched.status).toBe(200)
        expect(patched.json).toMatchObject({ has_host_pat: true, price_usd: "50.00" })
        expect(patched.text).not.toContain(rotated)
        expect((yield* repoPage("octo-org", "secret-sauce")).json.preview_available).toBe(true)
      })))

    it.effect("host_pat \"\" clears the stored token", () =>
      onItsOwnPrivateListing((key) => Effect.gen(function*() {
        const cleared = yield* call("PATCH", "/repos/octo-org/secret-sauce", { token: key, body: { host_pat: "" } })
        expect(cleared.status).toBe(200)
        expect(cleared.json).toMatchObject({ has_host_pat: false, price_usd: "50.00" })
        expect((yield* repoPage("octo-org", "secret-sauce")).json.preview_available).toBe(false)
      })))
  })
})

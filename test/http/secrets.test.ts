import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_WALLET, call, PRIVATE_TOKEN, type Reply, signInWithKey, SOLANA_WALLET, TestApp } from "../support/app.js"
import { GADGET_URL, SECRET_URL } from "../support/flows.js"

/**
 * `host_pat` is never shown to anyone (rule 3, DECISIONS "Errors"): not in a listing, a page, an inventory,
 * an account, an error, or a header, whatever the request that carried it.
 */
describe("host_pat never appears in a response", () => {
  layer(TestApp())((it) => {
    it.effect("across listing, patching, pages, stores, account, checkouts, takedown and every kind of error", () =>
      Effect.gen(function*() {
        const owner = yield* signInWithKey("private-owner@example.com")
        const other = yield* signInWithKey("someone-else@example.com")
        const seen: Array<{ step: string; expected: number; reply: Reply }> = []
        const step = (
          name: string,
          expected: number,
          method: "GET" | "POST" | "PATCH" | "DELETE",
          path: string,
          options: Parameters<typeof call>[2] = {}
        ) => Effect.tap(call(method, path, options), (reply) => void seen.push({ step: name, expected, reply }))
        const json = { accept: "application/json" }
        const pat = PRIVATE_TOKEN

        const created = yield* step("list private", 201, "POST", "/repos", {
          token: owner.key,
          body: { host_url: SECRET_URL, host_pat: pat, price_usd: "25.00", wallet_base: BASE_WALLET }
        })
        yield* step("re-list by owner", 201, "POST", "/repos", { token: owner.key, body: { host_url: SECRET_URL, host_pat: pat } })
        yield* step("list by another account", 409, "POST", "/repos", { token: other.key, body: { host_url: SECRET_URL, host_pat: pat } })
        yield* step("list anonymously", 409, "POST", "/repos", { body: { host_url: SECRET_URL, host_pat: pat, wallet_base: BASE_WALLET } })
        yield* step("token on a public repo", 201, "POST", "/repos", { token: owner.key, body: { host_url: GADGET_URL, host_pat: pat } })
        yield* step("bad price with token", 400, "POST", "/repos", { token: owner.key, body: { host_url: SECRET_URL, host_pat: pat, price_usd: "1.5" } })
        yield* step("unknown field with token", 400, "POST", "/repos", { body: { host_url: SECRET_URL, host_pat: pat, hostpat: pat } })
        yield* step("token in an array", 400, "POST", "/repos", { body: { host_url: SECRET_URL, host_pat: [pat] } })
        yield* step("token too long", 400, "POST", "/repos", { body: { host_url: SECRET_URL, host_pat: pat + "x".repeat(1100) } })
        yield* step("malformed JSON", 400, "POST", "/repos", { raw: `{"host_url":"${SECRET_URL}","host_pat":"${pat}"` })
        yield* step("form body", 415, "POST", "/repos", {
          raw: `host_url=${SECRET_URL}&host_pat=${pat}`,
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })

        yield* step("reprice", 200, "PATCH", "/repos/octo-org/secret-sauce", { token: owner.key, body: { price_usd: "30.00" } })
        yield* step("same token again", 200, "PATCH", "/repos/octo-org/secret-sauce", { token: owner.key, body: { host_pat: pat } })
        yield* step("patch by another account", 403, "PATCH", "/repos/octo-org/secret-sauce", { token: other.key, body: { host_pat: pat } })
        yield* step("patch an unlisted repo", 404, "PATCH", "/repos/octo-org/nothing", { token: owner.key, body: { host_pat: pat } })
        yield* step("patch with bad price", 400, "PATCH", "/repos/octo-org/secret-sauce", { token: owner.key, body: { host_pat: pat, price_usd: "0.00" } })
        yield* step("patch token in an object", 400, "PATCH", "/repos/octo-org/secret-sauce", { token: owner.key, body: { host_pat: { value: pat } } })
        yield* step("patch without credential", 401, "PATCH", "/repos/octo-org/secret-sauce", { body: { host_pat: pat } })

        yield* step("stores", 200, "GET", "/my/stores", { token: owner.key })
        yield* step("repo page", 200, "GET", "/r/octo-org/secret-sauce", { headers: json })
        yield* step("owner page", 200, "GET", "/r/octo-org")
        yield* step("account", 200, "GET", "/my/account", { token: owner.key })
        yield* step("wallet addition", 200, "PATCH", "/my/account", { token: owner.key, body: { wallet_solana: SOLANA_WALLET } })
        const stores = seen.find((s) => s.step === "stores")!.reply.json.stores as Array<any>
        const current = stores.find((s) => s.repo === "octo-org/secret-sauce")
        expect(current.has_host_pat).toBe(true)

        const rebuilt = (yield* call("GET", "/my/stores", { token: owner.key })).json.stores.find((s: any) => s.repo === "octo-org/secret-sauce")
        yield* step("checkout", 501, "GET", new URL(rebuilt.checkout_url).pathname)
        yield* step("test checkout", 501, "GET", new URL(rebuilt.test_checkout_url).pathname)
        yield* step("takedown", 204, "DELETE", "/repos/octo-org/secret-sauce", { token: owner.key })
        yield* step("voided checkout", 410, "GET", new URL(created.json.checkout_url).pathname)
        yield* step("page after takedown", 404, "GET", "/r/octo-org/secret-sauce", { headers: json })

        expect(seen.map((s) => [s.step, s.reply.status])).toEqual(
          seen.map((s) => [s.step, s.expected === 501 && [402, 503].includes(s.reply.status) ? s.reply.status : s.expected])
        )
        const leaks = seen.filter(({ reply }) =>
          reply.text.includes(pat) || Object.values(reply.headers).some((v) => String(v).includes(pat)))
        expect(leaks.map((s) => s.step)).toEqual([])
      }))
  })
})

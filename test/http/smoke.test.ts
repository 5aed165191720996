import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_WALLET, call, signInWithKey, TestApp } from "../support/app.js"

describe("HTTP smoke", () => {
  it.layer(TestApp())((it) => {
    it.effect("lists a repo with a key and shows it in /my/stores", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("smoke@example.com")
        const created = yield* call("POST", "/repos", {
          token: key,
          body: { host_url: "https://github.com/octo-org/widget", price_usd: "12.34", wallet_base: BASE_WALLET.toLowerCase() }
        })
        expect(created.status).toBe(201)
        expect(created.json.page).toBe("/r/Octo-Org/Widget")
        expect(created.json.selling).toBe(true)
        const stores = yield* call("GET", "/my/stores", { token: key })
        expect(stores.json.stores.map((s: any) => s.repo)).toEqual(["Octo-Org/Widget"])
        expect(stores.json.stores[0].wallet_base).toBe(BASE_WALLET)
      }))
  })
})

import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { BASE_WALLET, BASE_WALLET_2, call, signInWithKey, SOLANA_WALLET, SOLANA_WALLET_2, TestApp } from "../support/app.js"
import { listed, storesOf, WIDGET_URL } from "../support/flows.js"
import { describePostgres } from "../support/postgres.js"

const ROUNDS = 20

/**
 * Two concurrent edits of different fields of one row both survive on PostgreSQL (READ COMMITTED): each
 * read-modify-write locks and re-reads the row inside its transaction, so neither writes back a stale field.
 */
await describePostgres("concurrent edits (PostgreSQL)", (database) => {
  const storage = StorageSql.pipe(Layer.provide(database))
  it.layer(TestApp({ storage }).pipe(Layer.provideMerge(database)), { timeout: 120_000 })((it) => {
    it.effect("two concurrent PATCH /my/account with different fields keep both", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("concurrent-account@example.com")
        for (let round = 0; round < ROUNDS; round++) {
          const tagline = `Round ${round}`
          const wallet = round % 2 === 0 ? BASE_WALLET : BASE_WALLET_2
          const [a, b] = yield* Effect.all([
            call("PATCH", "/my/account", { token: key, body: { storefront_tagline: tagline } }),
            call("PATCH", "/my/account", { token: key, body: { wallet_base: wallet } })
          ], { concurrency: "unbounded" })
          expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([200, 200])
          const account = (yield* call("GET", "/my/account", { token: key })).json
          expect({ round, tagline: account.storefront_tagline, wallet: account.wallet_base }).toEqual({ round, tagline, wallet })
        }
      }))

    it.effect("two concurrent PATCH /repos with different fields keep both", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("concurrent-listing@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "1.00", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET }, key)
        for (let round = 0; round < ROUNDS; round++) {
          const price = `${round + 2}.00`
          const wallet = round % 2 === 0 ? SOLANA_WALLET_2 : SOLANA_WALLET
          const [a, b] = yield* Effect.all([
            call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: price } }),
            call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { wallet_solana: wallet } })
          ], { concurrency: "unbounded" })
          expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([200, 200])
          const store = (yield* storesOf(key))["Octo-Org/Widget"]
          expect({ round, price: store.price_usd, wallet: store.wallet_solana, base: store.wallet_base })
            .toEqual({ round, price, wallet, base: BASE_WALLET })
        }
      }))
  })
})

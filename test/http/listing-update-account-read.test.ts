import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { Account } from "../../domain/Account.js"
import type { Address } from "../../domain/Wallet.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import type { StoragePorts } from "../../app/AppLayer.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { BASE_WALLET, BASE_WALLET_2, call, signInWithKey, TestApp } from "../support/app.js"
import { listed, storesOf, WIDGET_URL } from "../support/flows.js"
import type { StorageError } from "../../ports/StorageError.js"

/**
 * Issue 12, finding 13(b): `PATCH /repos/...` resolves payout addresses from the account's default wallets.
 * Those must be read inside the transaction that saves the listing (after its row is locked), not before it:
 * otherwise an account wallet change committed in between is lost for that listing. The interleaving is
 * made deterministic by a listing store that, the moment the update asks to lock its row, lets a concurrent
 * account change commit first (as another transaction on PostgreSQL would, while this one waits for the lock).
 */
let beforeLock: Effect.Effect<void, StorageError> = Effect.void

const InterleavingStorage = Layer.effectContext(Effect.gen(function*() {
  const ctx = yield* Effect.context<StoragePorts>()
  const listings = Context.get(ctx, ListingStore)
  return Context.add(ctx, ListingStore, {
    ...listings,
    findByIdForUpdate: (id) =>
      Effect.zipRight(
        Effect.suspend(() => {
          const hook = beforeLock
          beforeLock = Effect.void
          return hook
        }),
        listings.findByIdForUpdate(id)
      )
  })
})).pipe(Layer.provide(StorageMemory))

describe("PATCH /repos reads the account's wallets inside its transaction", () => {
  layer(TestApp({ storage: InterleavingStorage }))((it) => {
    it.effect("an account default added while the update waits for the row is the one a cleared wallet falls back to", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("racing-seller@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        const accounts = yield* AccountStore
        const account = Option.getOrThrow(yield* accounts.findByEmail("racing-seller@example.com"))
        expect(account.wallets.base).toBeNull()

        // Committed by another request between this update's first read and its lock of the listing row.
        beforeLock = accounts.update(new Account({ ...account, wallets: { ...account.wallets, base: BASE_WALLET_2 as Address } }))
        const patched = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { wallet_base: "" } })
        expect(patched.status, patched.text).toBe(200)

        expect((yield* call("GET", "/my/account", { token: key })).json.wallet_base).toBe(BASE_WALLET_2)
        const store = (yield* storesOf(key))["Octo-Org/Widget"]
        expect({ wallet_base: store.wallet_base, selling: store.selling }).toEqual({ wallet_base: BASE_WALLET_2, selling: true })
      }))
  })
})

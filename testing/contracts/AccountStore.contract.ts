import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Account } from "../../domain/Account.js"
import { AccountId, SealedSecret } from "../../domain/Ids.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Transactor } from "../../ports/Transactor.js"
import { anAccount, BASE_ADDRESS, SOLANA_ADDRESS, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

/** The AccountStore port's guarantees, for any adapter. */
export const AccountStoreContract = (it: ContractIt<AccountStore | Transactor>, _backend: Backend) =>
  describe("AccountStore", () => {
    it.effect("inserts a new account and finds it by id and by email", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const account = anAccount({ wallets: { base: BASE_ADDRESS, solana: null }, storefrontTagline: "Tools ✓" })
        expect(yield* store.insertOrGet(account)).toStrictEqual(account)
        expect(yield* store.findById(account.id)).toStrictEqual(Option.some(account))
        expect(yield* store.findByEmail(account.email)).toStrictEqual(Option.some(account))
        expect(yield* store.findById(AccountId.make(`acct_${unique()}`))).toStrictEqual(Option.none())
        expect(yield* store.findByEmail(`nobody-${unique()}@example.com`)).toStrictEqual(Option.none())
      }))

    it.effect("returns the stored account when the email is already taken", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const first = anAccount()
        yield* store.insertOrGet(first)
        const second = anAccount({ email: first.email, storefrontTagline: "second" })
        expect(yield* store.insertOrGet(second)).toStrictEqual(first)
        expect(yield* store.findById(second.id)).toStrictEqual(Option.none())
      }))

    it.effect("creates exactly one account when 50 sign-ins of one email race", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const email = `race-${unique()}@example.com`
        const candidates = Array.from({ length: 50 }, () => anAccount({ email }))
        const results = yield* Effect.forEach(candidates, (a) => store.insertOrGet(a), { concurrency: "unbounded" })
        const ids = new Set(results.map((a) => a.id))
        expect(ids.size).toBe(1)
        const winner = Option.getOrThrow(yield* store.findByEmail(email))
        expect(ids.has(winner.id)).toBe(true)
        const stored = yield* Effect.forEach(candidates, (a) => store.findById(a.id))
        expect(stored.filter(Option.isSome)).toHaveLength(1)
      }))

    it.effect("replaces an account on update", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const account = anAccount()
        yield* store.insertOrGet(account)
        const changed = new Account({
          ...account,
          storefrontTagline: "Fine tools",
          webhookUrl: "https://hooks.example.com/x",
          webhookSecret: SealedSecret.make("v1.a.sealed-webhook-secret"),
          wallets: { base: BASE_ADDRESS, solana: SOLANA_ADDRESS },
          hostLogin: "SomeLogin"
        })
        yield* store.update(changed)
        expect(yield* store.findById(account.id)).toStrictEqual(Option.some(changed))
        expect(yield* store.findByEmail(account.email)).toStrictEqual(Option.some(changed))
      }))

    it.effect("finds accounts by verified code-host login, case-insensitively", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const login = `Login-${unique()}`
        const a = anAccount({ hostLogin: login, createdAt: new Date("2024-01-01T00:00:00.000Z") })
        const b = anAccount({ hostLogin: login.toLowerCase(), createdAt: new Date("2024-01-02T00:00:00.000Z") })
        const other = anAccount({ hostLogin: `${login}-2` })
        for (const account of [a, b, other, anAccount()]) yield* store.insertOrGet(account)
        const found = yield* store.findByHostLogin(login.toUpperCase())
        expect([...found].sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime())).toStrictEqual([a, b])
        expect(yield* store.findByHostLogin(`nobody-${unique()}`)).toStrictEqual([])
      }))

    it.effect("findByIdForUpdate reads the account and holds it until the transaction ends: no update is lost", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const tx = yield* Transactor
        const account = anAccount({ storefrontTagline: "" })
        yield* store.insertOrGet(account)
        expect(yield* tx.withTransaction(store.findByIdForUpdate(account.id))).toStrictEqual(Option.some(account))
        expect(yield* tx.withTransaction(store.findByIdForUpdate(AccountId.make(`acct_${unique()}`)))).toStrictEqual(Option.none())
        // 20 concurrent read-modify-writes, each adding one character to the tagline: all 20 count.
        yield* Effect.forEach(Array.from({ length: 20 }), () =>
          tx.withTransaction(Effect.gen(function*() {
            const current = Option.getOrThrow(yield* store.findByIdForUpdate(account.id))
            yield* Effect.yieldNow()
            yield* store.update(new Account({ ...current, storefrontTagline: `${current.storefrontTagline}x` }))
          })), { concurrency: "unbounded", discard: true })
        expect(Option.getOrThrow(yield* store.findById(account.id)).storefrontTagline).toBe("x".repeat(20))
      }))
  })

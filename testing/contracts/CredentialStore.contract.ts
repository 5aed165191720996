import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ApiKey } from "../../domain/Credentials.js"
import { AccountId, ApiKeyId } from "../../domain/Ids.js"
import { CredentialStore } from "../../ports/CredentialStore.js"
import { aDigest, aMagicToken, anApiKey, aSession, at, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const anAccountId = () => AccountId.make(`acct_${unique()}`)
const BEFORE_EXPIRY = at("2024-03-01T10:14:59.999Z")

/** The CredentialStore port's guarantees, for any adapter. */
export const CredentialStoreContract = (it: ContractIt<CredentialStore>, _backend: Backend) =>
  describe("CredentialStore", () => {
    it.effect("hands a magic-link token out once", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const token = aMagicToken()
        yield* store.putMagicToken(token)
        expect(yield* store.takeMagicToken(token.digest, BEFORE_EXPIRY)).toStrictEqual(Option.some(token))
        expect(yield* store.takeMagicToken(token.digest, BEFORE_EXPIRY)).toStrictEqual(Option.none())
        expect(yield* store.takeMagicToken(aDigest(), BEFORE_EXPIRY)).toStrictEqual(Option.none())
      }))

    it.effect("does not hand out an expired magic-link token", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const token = aMagicToken()
        yield* store.putMagicToken(token)
        expect(yield* store.takeMagicToken(token.digest, token.expiresAt)).toStrictEqual(Option.none())
      }))

    it.effect("gives a magic-link token to exactly one of 50 concurrent takers", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const token = aMagicToken()
        yield* store.putMagicToken(token)
        const takes = yield* Effect.all(
          Array.from({ length: 50 }, () => store.takeMagicToken(token.digest, BEFORE_EXPIRY)),
          { concurrency: "unbounded" }
        )
        expect(takes.filter(Option.isSome)).toStrictEqual([Option.some(token)])
      }))

    it.effect("finds a session by digest until it is deleted", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const accountId = anAccountId()
        const session = aSession(accountId)
        const sibling = aSession(accountId)
        yield* store.putSession(session)
        yield* store.putSession(sibling)
        expect(yield* store.findSession(session.digest)).toStrictEqual(Option.some(session))
        expect(yield* store.findSession(aDigest())).toStrictEqual(Option.none())
        yield* store.deleteSession(session.id)
        expect(yield* store.findSession(session.digest)).toStrictEqual(Option.none())
        expect(yield* store.findSession(sibling.digest)).toStrictEqual(Option.some(sibling))
      }))

    it.effect("finds API keys by digest and lists an account's keys oldest first, revoked ones included", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const accountId = anAccountId()
        const newer = anApiKey(accountId, { createdAt: at("2024-03-02T00:00:00.000Z") })
        const older = anApiKey(accountId, {
          createdAt: at("2024-03-01T00:00:00.000Z"),
          revokedAt: at("2024-03-03T00:00:00.000Z")
        })
        yield* store.putApiKey(newer)
        yield* store.putApiKey(older)
        yield* store.putApiKey(anApiKey(anAccountId()))
        expect(yield* store.findApiKey(newer.digest)).toStrictEqual(Option.some(newer))
        expect(yield* store.findApiKey(older.digest)).toStrictEqual(Option.some(older))
        expect(yield* store.findApiKey(aDigest())).toStrictEqual(Option.none())
        expect(yield* store.listApiKeys(accountId)).toStrictEqual([older, newer])
        expect(yield* store.listApiKeys(anAccountId())).toStrictEqual([])
      }))

    it.effect("revokes a key immediately, once, and only for the account that owns it", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const owner = anAccountId()
        const key = anApiKey(owner)
        yield* store.putApiKey(key)
        const when = at("2024-03-05T12:00:00.321Z")
        expect(yield* store.revokeApiKey(anAccountId(), key.id, when)).toBe(false)
        expect(yield* store.findApiKey(key.digest)).toStrictEqual(Option.some(key))
        expect(yield* store.revokeApiKey(owner, key.id, when)).toBe(true)
        expect(yield* store.findApiKey(key.digest)).toStrictEqual(Option.some(new ApiKey({ ...key, revokedAt: when })))
        expect(yield* store.revokeApiKey(owner, key.id, at("2024-03-06T00:00:00.000Z"))).toBe(false)
        expect(Option.getOrThrow(yield* store.findApiKey(key.digest)).revokedAt).toStrictEqual(when)
        expect(yield* store.revokeApiKey(owner, ApiKeyId.make(`key_${unique()}`), when)).toBe(false)
      }))

    it.effect("lets exactly one of 20 concurrent revocations succeed", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const owner = anAccountId()
        const key = anApiKey(owner)
        yield* store.putApiKey(key)
        const results = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => store.revokeApiKey(owner, key.id, new Date(Date.UTC(2024, 2, 5, 0, 0, i)))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r)).toHaveLength(1)
      }))

    it.effect("records when a key was last used", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const key = anApiKey(anAccountId())
        yield* store.putApiKey(key)
        const when = at("2024-03-04T09:00:00.999Z")
        yield* store.touchApiKey(key.id, when)
        expect(yield* store.findApiKey(key.digest)).toStrictEqual(Option.some(new ApiKey({ ...key, lastUsedAt: when })))
        yield* store.touchApiKey(ApiKeyId.make(`key_${unique()}`), when)
      }))
  })

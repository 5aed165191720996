import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { isWellFormedApiKey } from "../../domain/rules/ApiKeyFormat.js"
import { BASE_WALLET, call, signIn, signInWithKey, TestApp } from "../support/app.js"
import { expectProblem, listed, listRepo, storesOf, WIDGET_URL } from "../support/flows.js"

describe("API keys", () => {
  layer(TestApp())((it) => {
    it.effect("POST /my/keys with a session returns a new rmkt_ key once", () =>
      Effect.gen(function*() {
        const session = yield* signIn("keys@example.com")
        const now = yield* Clock.currentTimeMillis
        const created = yield* call("POST", "/my/keys", { token: session })
        expect(created.status).toBe(201)
        expect(Object.keys(created.json).sort()).toEqual(["created_at", "id", "key"])
        expect(created.json.key).toMatch(/^rmkt_[0-9A-Za-z]{36}$/)
        expect(isWellFormedApiKey(created.json.key)).toBe(true)
        expect(created.json.id).toMatch(/^key_[0-9A-Za-z]+$/)
        expect(created.json.created_at).toBe(new Date(now).toISOString())

        const other = yield* call("POST", "/my/keys", { token: session })
        expect(other.status).toBe(201)
        expect(other.json.key).not.toBe(created.json.key)
        expect(other.json.id).not.toBe(created.json.id)
      }))

    it.effect("an API key cannot create keys (403), and none is created", () =>
      Effect.gen(function*() {
        const { session, key } = yield* signInWithKey("no-minting@example.com")
        const refused = yield* call("POST", "/my/keys", { token: key })
        expectProblem(refused, 403, "forbidden")
        const list = yield* call("GET", "/my/keys", { token: session })
        expect(list.json.keys).toHaveLength(1)
      }))

    it.effect("GET /my/keys lists id, last4, created_at and last_used_at, never the key", () =>
      Effect.gen(function*() {
        const { session, key, keyId } = yield* signInWithKey("listing-keys@example.com")
        const created = new Date(yield* Clock.currentTimeMillis).toISOString()
        const before = yield* call("GET", "/my/keys", { token: session })
        expect(before.status).toBe(200)
        expect(before.json).toEqual({ keys: [{ id: keyId, last4: key.slice(-4), created_at: created, last_used_at: null }] })
        expect(before.text).not.toContain(key)
        expect(before.text).not.toContain(key.slice("rmkt_".length, -4))

        yield* TestClock.adjust("5 minutes")
        const usedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        expect((yield* call("GET", "/my/account", { token: key })).status).toBe(200)
        // Listing with the key itself shows the use it just made.
        const after = yield* call("GET", "/my/keys", { token: key })
        expect(after.json.keys).toEqual([{ id: keyId, last4: key.slice(-4), created_at: created, last_used_at: usedAt }])
        expect(after.text).not.toContain(key)
      }))

    it.effect("an API key is a full login for every management call", () =>
      Effect.gen(function*() {
        const { session, key } = yield* signInWithKey("headless@example.com")
        const spare = (yield* call("POST", "/my/keys", { token: session })).json.id as string

        expect((yield* call("GET", "/my/keys", { token: key })).status).toBe(200)
        expect((yield* call("GET", "/my/account", { token: key })).json.email).toBe("headless@example.com")
        const patched = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET } })
        expect(patched.status).toBe(200)
        expect(patched.json.wallet_base).toBe(BASE_WALLET)

        const created = yield* listRepo({ host_url: WIDGET_URL, price_usd: "3.00" }, key)
        expect(created.status).toBe(201)
        expect(Object.keys(yield* storesOf(key))).toEqual(["Octo-Org/Widget"])
        const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "4.00" } })
        expect(repriced.status).toBe(200)
        expect(repriced.json.price_usd).toBe("4.00")
        const takenDown = yield* call("DELETE", "/repos/Octo-Org/Widget", { token: key })
        expect(takenDown.status).toBe(204)
        expect(yield* storesOf(key)).toEqual({})

        expect((yield* call("DELETE", `/my/keys/${spare}`, { token: key })).status).toBe(204)
        const remaining = yield* call("GET", "/my/keys", { token: key })
        expect(remaining.json.keys.map((k: any) => k.id)).not.toContain(spare)
      }))

    it.effect("revocation is immediate: the very next request with the key is 401", () =>
      Effect.gen(function*() {
        const { session, key, keyId } = yield* signInWithKey("revoke@example.com")
        expect((yield* call("GET", "/my/stores", { token: key })).status).toBe(200)

        const revoked = yield* call("DELETE", `/my/keys/${keyId}`, { token: session })
        expect(revoked.status).toBe(204)
        expect(revoked.text).toBe("")

        const next = yield* call("GET", "/my/stores", { token: key })
        expectProblem(next, 401, "unauthenticated")
        expect(next.headers["www-authenticate"]).toBe("Bearer")
        // Not a silent anonymous listing either.
        const listing = yield* listRepo({ host_url: WIDGET_URL, price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        expectProblem(listing, 401, "unauthenticated")
        expect((yield* call("GET", "/my/keys", { token: session })).json.keys).toEqual([])
        // The session is untouched.
        expect((yield* call("GET", "/my/account", { token: session })).status).toBe(200)
      }))

    it.effect("a key can revoke itself, and is refused right after", () =>
      Effect.gen(function*() {
        const { key, keyId } = yield* signInWithKey("self-revoke@example.com")
        expect((yield* call("DELETE", `/my/keys/${keyId}`, { token: key })).status).toBe(204)
        expectProblem(yield* call("GET", "/my/keys", { token: key }), 401, "unauthenticated")
      }))

    it.effect("DELETE /my/keys/<id> is 404 for an unknown id, a revoked key or another account's key", () =>
      Effect.gen(function*() {
        const mine = yield* signInWithKey("mine@example.com")
        const theirs = yield* signInWithKey("theirs@example.com")
        expectProblem(yield* call("DELETE", "/my/keys/key_doesnotexist", { token: mine.session }), 404, "not_found")
        expectProblem(yield* call("DELETE", `/my/keys/${theirs.keyId}`, { token: mine.session }), 404, "not_found")
        // Their key still works.
        expect((yield* call("GET", "/my/stores", { token: theirs.key })).status).toBe(200)
        expect((yield* call("DELETE", `/my/keys/${mine.keyId}`, { token: mine.session })).status).toBe(204)
        expectProblem(yield* call("DELETE", `/my/keys/${mine.keyId}`, { token: mine.session }), 404, "not_found")
      }))

    it.effect("an account's keys are its own: listing shows none of another account's", () =>
      Effect.gen(function*() {
        const a = yield* signInWithKey("key-owner-a@example.com")
        const b = yield* signInWithKey("key-owner-b@example.com")
        const listA = yield* call("GET", "/my/keys", { token: a.session })
        expect(listA.json.keys.map((k: any) => k.id)).toEqual([a.keyId])
        expect(listA.text).not.toContain(b.keyId)
        // Not the widget: the full-login test above lists it, in whichever order the two run.
        const created = yield* listed({ host_url: "https://github.com/octo-org/gadget", price_usd: "2.00", wallet_base: BASE_WALLET }, a.key)
        expect(created.selling).toBe(true)
        expect(yield* storesOf(b.key)).toEqual({})
      }))
  })
})

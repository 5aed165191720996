/*
 * HostConnection on memory adapters (issue 28): the code-host connection flow (start, callback, confirm)
 * called as Effects over the memory code-host identity (OAuth codes that each prove a login once; no GitHub, no
 * HTTP client), decorated to record what the flow hands it (the state and the PKCE verifier); the memory
 * SingleUse, account store and the test SecretBox. Beside test/browser/host-connection.test.ts. Each test names
 * what is refused or guaranteed: a state or confirmation used once, bound to the browser and the account.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { hostTokenAad } from "../../domain/Account.js"
import type { Principal } from "../../domain/Credentials.js"
import { HOST_CONNECTION_TTL_MS, HostConnection } from "../../domain/usecases/HostConnection.js"
import { Listings } from "../../domain/usecases/Listings.js"
import type { CodeHostIdentity } from "../../ports/CodeHostIdentity.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { atNow, brief, failureOf, memoryApp, type MemoryAppOptions, signedIn, storedAccount } from "./memoryApp.js"

const CODES = { "code-octo": "octo-org", "code-octo-again": "octo-org", "code-admin": "octo-admin", "code-spare": "spare-login" }

/** What the flow handed the identity: the PKCE verifier at authorize and at exchange, and the codes exchanged. */
interface Seen {
  readonly authorized: Array<{ state: string; verifier: string; url: string }>
  readonly exchanged: Array<{ code: string; verifier: string }>
}

const recording = (seen: Seen) => (identity: CodeHostIdentity["Type"]): CodeHostIdentity["Type"] => ({
  ...identity,
  authorizeUrl: (state, proofKey) =>
    Effect.tap(identity.authorizeUrl(state, proofKey), (url) => Effect.sync(() => void seen.authorized.push({ state, verifier: Redacted.value(proofKey), url }))),
  exchange: (code, proofKey) =>
    Effect.suspend(() => {
      seen.exchanged.push({ code: Redacted.value(code), verifier: Redacted.value(proofKey) })
      return identity.exchange(code, proofKey)
    })
})

const setup = (options: MemoryAppOptions = { codes: CODES }) => {
  const seen: Seen = { authorized: [], exchanged: [] }
  const layer = memoryApp({ ...options, wrapIdentity: recording(seen) })
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(Effect.zipRight(atNow, effect), layer) as Effect.Effect<A, E>
  return { seen, run }
}

const start = (principal: Principal) => Effect.flatMap(HostConnection, (h) => h.start(principal))
const callback = (principal: Principal, input: { code?: string; state?: string; error?: string }, nonce: Redacted.Redacted<string> | undefined) =>
  Effect.flatMap(HostConnection, (h) => h.callback(principal, input, nonce))
const confirm = (principal: Principal, confirmation: string | undefined, nonce: Redacted.Redacted<string> | undefined) =>
  Effect.flatMap(HostConnection, (h) => h.confirm(principal, confirmation, nonce))
const stateOf = (url: string) => new URL(url).searchParams.get("state")!
const fieldOf = (error: unknown) => (error as { errors?: ReadonlyArray<{ field: string }> }).errors?.[0]?.field

/** A flow started by `principal`: its state and the browser's nonce. */
const started = (principal: Principal) => Effect.map(start(principal), ({ browserNonce, url }) => ({ state: stateOf(url), nonce: browserNonce }))

/** A connection completed by `principal` with `code`: start, callback, confirm. */
const connect = (principal: Principal, code: string) =>
  Effect.gen(function*() {
    const { nonce, state } = yield* started(principal)
    const pending = yield* callback(principal, { code, state }, nonce)
    return yield* confirm(principal, pending.confirmation, nonce)
  })

const notConnected = (id: Principal["accountId"]) =>
  Effect.map(storedAccount(id), (account) => expect({ hostLogin: account.hostLogin, hostToken: account.hostToken }).toEqual({ hostLogin: null, hostToken: null }))

describe("HostConnection: the flow", () => {
  it.effect("without an OAuth app every step is NotConfigured and nothing is stored", () => {
    const { run } = setup({})
    return run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const nonce = Redacted.make("n")
      expect(brief(yield* failureOf(start(principal)))).toMatchObject({ _tag: "NotConfigured" })
      expect(brief(yield* failureOf(callback(principal, { code: "c", state: "s" }, nonce)))).toMatchObject({ _tag: "NotConfigured" })
      expect(brief(yield* failureOf(confirm(principal, "x", nonce)))).toMatchObject({ _tag: "NotConfigured" })
      yield* notConnected(account.id)
    }))
  })

  it.effect("the callback only proposes: nothing is stored until the person confirms; confirming stores the login and its token, sealed for this account and login", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      const pending = yield* callback(principal, { code: "code-octo", state }, nonce)
      expect(pending.login).toBe("octo-org")
      expect(pending.account.id).toBe(account.id)
      expect(pending.confirmation).not.toContain("memory_token")
      yield* notConnected(account.id)

      const connected = yield* confirm(principal, pending.confirmation, nonce)
      const stored = yield* storedAccount(account.id)
      expect(stored.hostLogin).toBe("octo-org")
      expect(connected.hostLogin).toBe("octo-org")
      expect(String(stored.hostToken)).not.toContain("memory_token")
      const box = yield* SecretBox
      expect(Redacted.value(yield* box.open(stored.hostToken!, hostTokenAad(stored, "octo-org")))).toBe("memory_token_1")
      // Bound to the login: it does not open as another login's token.
      expect((yield* Effect.flip(box.open(stored.hostToken!, hostTokenAad(stored, "spare-login"))))._tag).toBe("SecretBoxError")
    }))
  })

  it.effect("PKCE: the verifier sent at exchange is the one bound at authorize, never in the authorize URL nor the browser nonce, and new for each flow", () => {
    const { run, seen } = setup()
    return run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const first = yield* started(principal)
      const second = yield* started(principal)
      yield* callback(principal, { code: "code-octo", state: first.state }, first.nonce)
      expect(seen.authorized).toHaveLength(2)
      const [a, b] = seen.authorized as [Seen["authorized"][0], Seen["authorized"][0]]
      expect(seen.exchanged).toEqual([{ code: "code-octo", verifier: a.verifier }])
      expect(a.verifier).toMatch(/^[0-9a-f]{64}$/)
      expect(a.verifier).not.toBe(b.verifier)
      expect(a.url).not.toContain(a.verifier)
      expect(a.verifier).not.toBe(Redacted.value(first.nonce))
      expect(a.url).not.toContain(Redacted.value(first.nonce))
      expect(second.state).not.toBe(first.state)
    }))
  })

  it.effect("a state is single use: a second callback with it (even with a fresh code) is InvalidInput naming state, and nothing more is exchanged", () => {
    const { run, seen } = setup()
    return run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      yield* callback(principal, { code: "code-octo", state }, nonce)
      const error = yield* failureOf(callback(principal, { code: "code-octo-again", state }, nonce))
      expect(brief(error)).toMatchObject({ _tag: "InvalidInput" })
      expect(fieldOf(error)).toBe("state")
      expect(seen.exchanged.map((e) => e.code)).toEqual(["code-octo"])
    }))
  })

  it.effect("a callback from another browser (other nonce or none) is Forbidden and connects nothing; the state is not spent, so the browser that started can finish", () => {
    const { run, seen } = setup()
    return run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      const other = (yield* started(principal)).nonce
      for (const wrong of [other, undefined, Redacted.make("")]) {
        expect(brief(yield* failureOf(callback(principal, { code: "code-octo", state }, wrong)))).toMatchObject({ _tag: "Forbidden" })
      }
      expect(seen.exchanged).toEqual([])
      yield* notConnected(account.id)
      const pending = yield* callback(principal, { code: "code-octo", state }, nonce)
      expect(pending.login).toBe("octo-org")
    }))
  })

  it.effect("a link started by one account and finished by another account's session is Forbidden, even with the starting browser's nonce: neither account is connected", () => {
    const { run, seen } = setup()
    return run(Effect.gen(function*() {
      const attacker = yield* signedIn()
      const victim = yield* signedIn()
      const { nonce, state } = yield* started(attacker.principal)
      expect(brief(yield* failureOf(callback(victim.principal, { code: "code-octo", state }, nonce)))).toMatchObject({ _tag: "Forbidden" })
      expect(seen.exchanged).toEqual([])
      yield* notConnected(attacker.account.id)
      yield* notConnected(victim.account.id)
    }))
  })

  it.effect("a state older than 10 minutes is InvalidInput naming state; one a moment younger works", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const old = yield* started(principal)
      yield* TestClock.adjust(1)
      const younger = yield* started(principal)
      yield* TestClock.adjust(HOST_CONNECTION_TTL_MS - 1)
      const error = yield* failureOf(callback(principal, { code: "code-octo", state: old.state }, old.nonce))
      expect(fieldOf(error)).toBe("state")
      expect((yield* callback(principal, { code: "code-octo", state: younger.state }, younger.nonce)).login).toBe("octo-org")
    }))
  })

  it.effect("forged states are InvalidInput naming state: missing, garbage, one character changed, oversized, or a confirmation passed as a state", () => {
    const { run, seen } = setup()
    return run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      const other = yield* started(principal)
      const pending = yield* callback(principal, { code: "code-octo", state: other.state }, other.nonce)
      const flipped = state.slice(0, 40) + (state[40] === "A" ? "B" : "A") + state.slice(41)
      for (const forged of [undefined, "", "garbage", flipped, state + "x".repeat(3000), pending.confirmation]) {
        const error = yield* failureOf(callback(principal, forged === undefined ? { code: "code-octo-again" } : { code: "code-octo-again", state: forged }, nonce))
        expect({ forged: forged?.slice(0, 12), tag: error._tag, field: fieldOf(error) }).toEqual({ forged: forged?.slice(0, 12), tag: "InvalidInput", field: "state" })
      }
      expect(seen.exchanged.map((e) => e.code)).toEqual(["code-octo"])
      // None of them spent the real state.
      expect((yield* callback(principal, { code: "code-octo-again", state }, nonce)).login).toBe("octo-org")
    }))
  })

  it.effect("a declined authorization (error=access_denied) is InvalidInput naming code and spends the state; a code the host refuses is InvalidInput naming code", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const declined = yield* started(principal)
      const error = yield* failureOf(callback(principal, { error: "access_denied", state: declined.state }, declined.nonce))
      expect(fieldOf(error)).toBe("code")
      expect(fieldOf(yield* failureOf(callback(principal, { code: "code-octo", state: declined.state }, declined.nonce)))).toBe("state")
      const refused = yield* started(principal)
      expect(fieldOf(yield* failureOf(callback(principal, { code: "not-a-code", state: refused.state }, refused.nonce)))).toBe("code")
      const missing = yield* started(principal)
      expect(fieldOf(yield* failureOf(callback(principal, { state: missing.state }, missing.nonce)))).toBe("code")
      yield* notConnected(account.id)
    }))
  })
})

describe("HostConnection.confirm", () => {
  it.effect("a confirmation is single use: confirming it again is InvalidInput naming confirmation", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const { principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      const pending = yield* callback(principal, { code: "code-octo", state }, nonce)
      yield* confirm(principal, pending.confirmation, nonce)
      expect(fieldOf(yield* failureOf(confirm(principal, pending.confirmation, nonce)))).toBe("confirmation")
    }))
  })

  it.effect("a confirmation posted by another account or from another browser is Forbidden and stores nothing; the right one still confirms", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const owner = yield* signedIn()
      const other = yield* signedIn()
      const { nonce, state } = yield* started(owner.principal)
      const pending = yield* callback(owner.principal, { code: "code-octo", state }, nonce)
      const otherNonce = (yield* started(owner.principal)).nonce
      expect(brief(yield* failureOf(confirm(other.principal, pending.confirmation, nonce)))).toMatchObject({ _tag: "Forbidden" })
      expect(brief(yield* failureOf(confirm(owner.principal, pending.confirmation, otherNonce)))).toMatchObject({ _tag: "Forbidden" })
      expect(brief(yield* failureOf(confirm(owner.principal, pending.confirmation, undefined)))).toMatchObject({ _tag: "Forbidden" })
      yield* notConnected(owner.account.id)
      yield* notConnected(other.account.id)
      expect((yield* confirm(owner.principal, pending.confirmation, nonce)).hostLogin).toBe("octo-org")
    }))
  })

  it.effect("a confirmation older than 10 minutes, a forged one, or a state passed as one is InvalidInput naming confirmation and stores nothing", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const { account, principal } = yield* signedIn()
      const { nonce, state } = yield* started(principal)
      const pending = yield* callback(principal, { code: "code-octo", state }, nonce)
      const fresh = yield* started(principal)
      for (const forged of [undefined, "", "garbage", fresh.state]) {
        expect(fieldOf(yield* failureOf(confirm(principal, forged, nonce)))).toBe("confirmation")
      }
      yield* TestClock.adjust(HOST_CONNECTION_TTL_MS)
      expect(fieldOf(yield* failureOf(confirm(principal, pending.confirmation, nonce)))).toBe("confirmation")
      yield* notConnected(account.id)
    }))
  })

  it.effect("a login belongs to one account: a newer proof moves it and drops the other account's login and token", () => {
    const { run } = setup()
    return run(Effect.gen(function*() {
      const first = yield* signedIn()
      const second = yield* signedIn()
      yield* connect(first.principal, "code-octo")
      expect((yield* storedAccount(first.account.id)).hostLogin).toBe("octo-org")
      yield* connect(second.principal, "code-octo-again")
      yield* notConnected(first.account.id)
      expect((yield* storedAccount(second.account.id)).hostLogin).toBe("octo-org")
    }))
  })
})

describe("HostConnection: what a connection proves to Listings", () => {
  it.effect("a connected login that administers an organisation's repo takes over its anonymous listing; the same account unconnected is AlreadyListed", () => {
    const { run } = setup({ codes: CODES, admins: { "Octo-Org/Widget": ["octo-admin"] } })
    return run(Effect.gen(function*() {
      const listings = yield* Listings
      const anonymous = yield* listings.create({ host_url: "https://github.com/Octo-Org/Widget", price_usd: "1.00" }, null, "203.0.113.1")
      const { account, principal } = yield* signedIn()
      expect(brief(yield* failureOf(listings.create({ host_url: "https://github.com/Octo-Org/Widget" }, principal, "203.0.113.1")))).toMatchObject({ _tag: "AlreadyListed" })
      yield* connect(principal, "code-admin")
      const taken = yield* listings.create({ host_url: "https://github.com/Octo-Org/Widget" }, principal, "203.0.113.1")
      expect(taken.accountId).toBe(account.id)
      const old = Option.getOrThrow(yield* Effect.flatMap(ListingStore, (s) => s.findById(anonymous.id)))
      expect(old.status).toBe("taken_down")
    }))
  })

  it.effect("a connected login that neither owns nor administers the repo proves nothing: AlreadyListed, the listing untouched", () => {
    const { run } = setup({ codes: CODES, admins: { "Octo-Org/Widget": ["octo-admin"] } })
    return run(Effect.gen(function*() {
      const listings = yield* Listings
      const anonymous = yield* listings.create({ host_url: "https://github.com/Octo-Org/Widget", price_usd: "1.00" }, null, "203.0.113.1")
      const { principal } = yield* signedIn()
      yield* connect(principal, "code-spare")
      expect(brief(yield* failureOf(listings.create({ host_url: "https://github.com/Octo-Org/Widget" }, principal, "203.0.113.1")))).toMatchObject({ _tag: "AlreadyListed" })
      expect(Option.getOrThrow(yield* Effect.flatMap(ListingStore, (s) => s.findLive("Octo-Org", "Widget"))).id).toBe(anonymous.id)
    }))
  })
})

/*
 * Auth on memory adapters (issue 28): magic links mailed (captured by memoryPorts' mailer) and exchanged for
 * sessions, bearer credentials resolved, API keys created, listed and revoked, sign-out; all called as Effects
 * on memory storage, the in-memory rate limiter and the TestClock. Beside test/http/auth.test.ts,
 * keys.test.ts and magic-link-lockout.test.ts. CSRF is the HTTP host's (pages), not this use case's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { MAGIC_LINK_TTL_MS, SESSION_TTL_MS } from "../../domain/Credentials.js"
import { Auth, LIMITS } from "../../domain/usecases/Auth.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CredentialStore } from "../../ports/CredentialStore.js"
import { MailError } from "../../ports/Mailer.js"
import { apiKeyOf, atNow, BASE_URL, brief, failureOf, memoryApp, shown, signedIn } from "./memoryApp.js"

const CLIENT = "203.0.113.5"

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(Effect.zipRight(atNow, effect), memoryApp()) as Effect.Effect<A, E>

const request = (email: string, client = CLIENT) => Effect.flatMap(Auth, (a) => a.requestMagicLink(email, client))
const mails = Effect.flatMap(SentMail, (m) => m.all)
/** The token of the last link mailed (read from the link, as the person clicking it would). */
const lastToken = Effect.gen(function*() {
  const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
  const link = mail.text.match(/https?:\/\/\S+/)![0]
  expect(link.startsWith(`${BASE_URL}/auth/verify?token=`)).toBe(true)
  return Redacted.make(new URL(link).searchParams.get("token")!)
})
const verify = (token: Redacted.Redacted<string>) => Effect.flatMap(Auth, (a) => a.verify(token))
const authenticate = (bearer: string | Redacted.Redacted<string>) =>
  Effect.flatMap(Auth, (a) => a.authenticate(typeof bearer === "string" ? Redacted.make(bearer) : bearer))
/** Signs in through a mailed link: the session issued. */
const signIn = (email: string) => Effect.zipRight(request(email), Effect.flatMap(lastToken, verify))

describe("Auth.requestMagicLink and verify", () => {
  it.effect("a link is mailed to the normalized address, pointing at the public origin; verifying it creates the account and a session", () =>
    run(Effect.gen(function*() {
      yield* request("  Seller@Example.COM ")
      const sent = yield* mails
      expect(sent.map((m) => m.to)).toEqual(["seller@example.com"])
      const session = yield* verify(yield* lastToken)
      expect(session.account.email).toBe("seller@example.com")
      expect(session.expiresAt.getTime() - (yield* TestClock.currentTimeMillis)).toBe(SESSION_TTL_MS)
      const stored = yield* Effect.flatMap(AccountStore, (s) => s.findByEmail("seller@example.com"))
      expect(Option.map(stored, (a) => a.id)).toEqual(Option.some(session.account.id))
      const principal = yield* authenticate(session.accessToken)
      expect(principal).toMatchObject({ accountId: session.account.id, via: "session" })
    })))

  it.effect("a link is single use: the second verify of the same token is Unauthenticated and issues no session", () =>
    run(Effect.gen(function*() {
      yield* request("once@example.com")
      const token = yield* lastToken
      yield* verify(token)
      expect(brief(yield* failureOf(verify(token)))).toMatchObject({ _tag: "Unauthenticated" })
    })))

  it.effect("a link expires after 15 minutes: verified a moment later it is Unauthenticated; a moment before it works", () =>
    run(Effect.gen(function*() {
      yield* request("late@example.com")
      const late = yield* lastToken
      yield* request("early@example.com")
      const early = yield* lastToken
      yield* TestClock.adjust(MAGIC_LINK_TTL_MS - 1)
      expect((yield* verify(early)).account.email).toBe("early@example.com")
      yield* TestClock.adjust(1)
      expect(brief(yield* failureOf(verify(late)))).toMatchObject({ _tag: "Unauthenticated" })
      expect(yield* Effect.flatMap(AccountStore, (s) => s.findByEmail("late@example.com"))).toEqual(Option.none())
    })))

  it.effect("a second request does not lock the owner out: both links sign in, to the same account", () =>
    run(Effect.gen(function*() {
      yield* request("owner@example.com")
      const first = yield* lastToken
      yield* request("owner@example.com", "198.51.100.66")
      const second = yield* lastToken
      const a = yield* verify(first)
      const b = yield* verify(second)
      expect(b.account.id).toBe(a.account.id)
      expect(Redacted.value(b.accessToken)).not.toBe(Redacted.value(a.accessToken))
    })))

  it.effect(`past ${LIMITS.magicLinkPerEmail} links per email in a link's lifetime, whoever asks, requests succeed but mail nothing (never a 429 that would lock the owner out); the links already mailed all still work`, () =>
    run(Effect.gen(function*() {
      const tokens: Array<Redacted.Redacted<string>> = []
      for (let i = 0; i < LIMITS.magicLinkPerEmail; i++) {
        yield* request("victim@example.com", `198.51.100.${i}`)
        tokens.push(yield* lastToken)
      }
      for (let i = 0; i < 5; i++) yield* request("victim@example.com", `192.0.2.${i}`)
      expect((yield* mails).length).toBe(LIMITS.magicLinkPerEmail)
      for (const token of tokens) expect((yield* verify(token)).account.email).toBe("victim@example.com")
      // A link's lifetime later the address gets links again.
      yield* TestClock.adjust(MAGIC_LINK_TTL_MS)
      yield* request("victim@example.com")
      expect((yield* mails).length).toBe(LIMITS.magicLinkPerEmail + 1)
    })))

  it.effect(`past ${LIMITS.magicLinkPerClient} requests an hour from one client address: RateLimited with a retry time, and nothing mailed; other clients are not held up`, () =>
    run(Effect.gen(function*() {
      for (let i = 0; i < LIMITS.magicLinkPerClient; i++) yield* request(`user${i}@example.com`)
      const error = yield* failureOf(request("one-more@example.com"))
      expect(brief(error)).toMatchObject({ _tag: "RateLimited" })
      expect((error as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0)
      expect((yield* mails).map((m) => m.to)).not.toContain("one-more@example.com")
      yield* request("one-more@example.com", "198.51.100.200")
      expect((yield* mails).at(-1)!.to).toBe("one-more@example.com")
    })))

  it.effect("a malformed email is InvalidInput naming email, mails nothing and spends none of the client's budget", () =>
    run(Effect.gen(function*() {
      for (let i = 0; i < LIMITS.magicLinkPerClient + 5; i++) {
        const error = yield* failureOf(request("not-an-email"))
        expect((error as { errors: ReadonlyArray<{ field: string }> }).errors.map((e) => e.field)).toEqual(["email"])
      }
      expect(yield* mails).toEqual([])
      yield* request("fine@example.com")
      expect((yield* mails).length).toBe(1)
    })))

  it.effect("forged, empty and oversized tokens are refused (Unauthenticated or InvalidInput) and create no account", () =>
    run(Effect.gen(function*() {
      yield* request("real@example.com")
      const real = Redacted.value(yield* lastToken)
      for (const token of ["", "x".repeat(257), real.slice(0, -1) + (real.endsWith("A") ? "B" : "A"), "not-a-token"]) {
        const error = yield* failureOf(verify(Redacted.make(token)))
        expect(["Unauthenticated", "InvalidInput"]).toContain(error._tag)
      }
      expect(yield* Effect.flatMap(AccountStore, (s) => s.findByEmail("real@example.com"))).toEqual(Option.none())
      // The real link was not spent by those attempts.
      expect((yield* verify(Redacted.make(real))).account.email).toBe("real@example.com")
    })))
})

describe("Auth.requestMagicLink: a mail server that fails", () => {
  it.effect("a link the mail server cannot send is MailUnavailable (never a silent success), and once it is back the next request mails a working link", () => {
    const server = { down: true }
    const layer = memoryApp({
      wrapMailer: (mailer) => ({
        ...mailer,
        send: (mail) => Effect.suspend(() => server.down ? Effect.fail(new MailError({ message: "connection refused" })) : mailer.send(mail))
      })
    })
    return Effect.provide(Effect.gen(function*() {
      yield* atNow
      expect(brief(yield* failureOf(request("unlucky@example.com")))).toMatchObject({ _tag: "MailUnavailable" })
      expect(yield* mails).toEqual([])
      server.down = false
      yield* request("unlucky@example.com")
      expect((yield* verify(yield* lastToken)).account.email).toBe("unlucky@example.com")
    }), layer)
  })
})

describe("Auth.authenticate and signOut", () => {
  it.effect("a session is refused once it expires (30 days) and after sign-out (Unauthenticated)", () =>
    run(Effect.gen(function*() {
      const a = yield* signIn("a@example.com")
      const b = yield* signIn("b@example.com")
      const principal = yield* authenticate(b.accessToken)
      yield* Effect.flatMap(Auth, (auth) => auth.signOut(principal))
      expect(brief(yield* failureOf(authenticate(b.accessToken)))).toMatchObject({ _tag: "Unauthenticated" })
      yield* TestClock.adjust(SESSION_TTL_MS - 1000)
      expect((yield* authenticate(a.accessToken)).accountId).toBe(a.account.id)
      yield* TestClock.adjust(1000)
      expect(brief(yield* failureOf(authenticate(a.accessToken)))).toMatchObject({ _tag: "Unauthenticated" })
    })))

  it.effect("unknown, empty and oversized bearers are Unauthenticated", () =>
    run(Effect.gen(function*() {
      for (const bearer of ["", "x".repeat(300), "someone-elses-session", "rmkt_notAKey", "rmkt_" + "A".repeat(36)]) {
        expect({ bearer: bearer.slice(0, 20), tag: (yield* failureOf(authenticate(bearer)))._tag }).toEqual({ bearer: bearer.slice(0, 20), tag: "Unauthenticated" })
      }
    })))

  it.effect(`one credential may make ${LIMITS.managementPerMinute} requests a minute: the next is RateLimited; another credential is not held up, and a minute later it may go on`, () =>
    run(Effect.gen(function*() {
      const a = yield* signIn("busy@example.com")
      const b = yield* signIn("calm@example.com")
      for (let i = 0; i < LIMITS.managementPerMinute; i++) yield* authenticate(a.accessToken)
      expect(brief(yield* failureOf(authenticate(a.accessToken)))).toMatchObject({ _tag: "RateLimited" })
      yield* authenticate(b.accessToken)
      yield* TestClock.adjust(60_000)
      yield* authenticate(a.accessToken)
    })))
})

describe("Auth: API keys", () => {
  it.effect("a key is shown once, at creation: only its digest and last four are stored, and listing never shows it", () =>
    run(Effect.gen(function*() {
      const session = yield* signIn("keys@example.com")
      const principal = yield* authenticate(session.accessToken)
      const { key, record } = yield* Effect.flatMap(Auth, (a) => a.createApiKey(principal))
      const plain = Redacted.value(key)
      expect(plain).toMatch(/^rmkt_/)
      expect(record.last4).toBe(plain.slice(-4))
      expect(shown(record)).not.toContain(plain)
      const listed = yield* Effect.flatMap(Auth, (a) => a.listApiKeys(principal))
      expect(listed.map((k) => k.id)).toEqual([record.id])
      expect(shown(listed)).not.toContain(plain)
      expect(shown(yield* Effect.flatMap(CredentialStore, (c) => c.listApiKeys(principal.accountId)))).not.toContain(plain)
      expect(yield* authenticate(key)).toMatchObject({ accountId: session.account.id, via: "api_key", credentialId: record.id })
    })))

  it.effect("an API key cannot mint more keys (Forbidden: sessions only), and nothing is stored", () =>
    run(Effect.gen(function*() {
      const { account } = yield* signedIn()
      const error = yield* failureOf(Effect.flatMap(Auth, (a) => a.createApiKey(apiKeyOf(account))))
      expect(brief(error)).toMatchObject({ _tag: "Forbidden" })
      expect(yield* Effect.flatMap(CredentialStore, (c) => c.listApiKeys(account.id))).toEqual([])
    })))

  it.effect("a revoked key is refused at once and leaves the list; revoking it again is NotFound", () =>
    run(Effect.gen(function*() {
      const session = yield* signIn("revoke@example.com")
      const principal = yield* authenticate(session.accessToken)
      const kept = yield* Effect.flatMap(Auth, (a) => a.createApiKey(principal))
      const gone = yield* Effect.flatMap(Auth, (a) => a.createApiKey(principal))
      yield* authenticate(gone.key)
      yield* Effect.flatMap(Auth, (a) => a.revokeApiKey(principal, gone.record.id))
      expect(brief(yield* failureOf(authenticate(gone.key)))).toMatchObject({ _tag: "Unauthenticated" })
      expect((yield* Effect.flatMap(Auth, (a) => a.listApiKeys(principal))).map((k) => k.id)).toEqual([kept.record.id])
      expect(brief(yield* failureOf(Effect.flatMap(Auth, (a) => a.revokeApiKey(principal, gone.record.id))))).toMatchObject({ _tag: "NotFound" })
      yield* authenticate(kept.key)
    })))

  it.effect("another account cannot revoke or list someone's key: NotFound, and the key still works", () =>
    run(Effect.gen(function*() {
      const owner = yield* authenticate((yield* signIn("owner-keys@example.com")).accessToken)
      const other = yield* authenticate((yield* signIn("other-keys@example.com")).accessToken)
      const { key, record } = yield* Effect.flatMap(Auth, (a) => a.createApiKey(owner))
      expect(brief(yield* failureOf(Effect.flatMap(Auth, (a) => a.revokeApiKey(other, record.id))))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flatMap(Auth, (a) => a.listApiKeys(other))).toEqual([])
      expect((yield* authenticate(key)).accountId).toBe(owner.accountId)
    })))

  it.effect("a key's last use is recorded at most once a minute (not a write per request)", () =>
    run(Effect.gen(function*() {
      const principal = yield* authenticate((yield* signIn("touch@example.com")).accessToken)
      const { key, record } = yield* Effect.flatMap(Auth, (a) => a.createApiKey(principal))
      const lastUsed = Effect.map(Effect.flatMap(CredentialStore, (c) => c.listApiKeys(principal.accountId)), (keys) => keys.find((k) => k.id === record.id)!.lastUsedAt?.getTime() ?? null)
      const t0 = yield* TestClock.currentTimeMillis
      yield* authenticate(key)
      expect(yield* lastUsed).toBe(t0)
      yield* TestClock.adjust(30_000)
      yield* authenticate(key)
      expect(yield* lastUsed).toBe(t0)
      yield* TestClock.adjust(30_001)
      yield* authenticate(key)
      expect(yield* lastUsed).toBe(t0 + 60_001)
    })))
})

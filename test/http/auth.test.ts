import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { MailerLog } from "../../adapters/mail/MailerLog.js"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { formatApiKey } from "../../domain/rules/ApiKeyFormat.js"
import { BASE_URL, call, signIn, signInWithKey, TestApp } from "../support/app.js"
import { expectProblem, listed, listRepo, magicToken, WIDGET_URL } from "../support/flows.js"
import { expectPage, formPost, htmlGet, TestAppWith } from "../support/pages.js"

const DAY_MS = 24 * 60 * 60 * 1000

describe("sign-in by magic link", () => {
  layer(TestApp())((it) => {
    it.effect("answers 202 {sent:true, delivery:\"email\"} alike for an unknown and a known email", () =>
      Effect.gen(function*() {
        yield* signIn("known@example.com")
        const known = yield* call("POST", "/auth/magic-link", { body: { email: "known@example.com" } })
        const unknown = yield* call("POST", "/auth/magic-link", { body: { email: "nobody-yet@example.com" } })
        for (const reply of [known, unknown]) {
          expect(reply.status).toBe(202)
          expect(reply.json).toEqual({ sent: true, delivery: "email" })
          expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        }
        expect(known.text).toBe(unknown.text)
      }))

    it.effect("emails <BASE_URL>/auth/verify?token=... to the address asked for", () =>
      Effect.gen(function*() {
        const sent = yield* call("POST", "/auth/magic-link", { body: { email: "Link.Shape@Example.com" } })
        expect(sent.status).toBe(202)
        const mail = (yield* Effect.flatMap(SentMail, (m) => m.all)).at(-1)!
        expect(mail.to).toBe("link.shape@example.com")
        const links = mail.text.match(/https?:\/\/\S+/g)
        expect(links).toHaveLength(1)
        // 32 random bytes, base64url: 43 characters.
        expect(links![0]).toMatch(new RegExp(`^${BASE_URL.replace(/\./g, "\\.")}/auth/verify\\?token=[A-Za-z0-9_-]{43}$`))
      }))

    it.effect("GET /auth/verify shows a page with a form and does not consume the token", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("page@example.com")
        const path = `/auth/verify?token=${encodeURIComponent(token)}`
        // Mail scanners pre-open links: opening it twice must not burn it.
        yield* call("GET", path)
        const page = yield* call("GET", path)
        expect(page.status).toBe(200)
        expect(page.headers["content-type"]).toMatch(/^text\/html/)
        expect(page.text).toContain(`<form method="post" action="/auth/verify">`)
        expect(page.text).toContain(`<input type="hidden" name="token" value="${token}">`)
        const verified = yield* call("POST", "/auth/verify", { body: { token } })
        expect(verified.status).toBe(200)
        expect(verified.json.account.email).toBe("page@example.com")
      }))

    it.effect("the page's form post (urlencoded, as a browser sends it) signs in", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("browser@example.com")
        const verified = yield* call("POST", "/auth/verify", {
          raw: `token=${encodeURIComponent(token)}`,
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        expect(verified.status).toBe(200)
        expect(verified.json.token_type).toBe("Bearer")
        expect(verified.json.account.email).toBe("browser@example.com")
      }))

    it.effect("POST /auth/verify returns a Bearer session valid for 30 days and the account", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("session@example.com")
        const now = yield* Clock.currentTimeMillis
        const verified = yield* call("POST", "/auth/verify", { body: { token } })
        expect(verified.status).toBe(200)
        expect(Object.keys(verified.json).sort()).toEqual(["access_token", "account", "expires_at", "token_type"])
        expect(verified.json.token_type).toBe("Bearer")
        expect(verified.json.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(verified.json.expires_at).toBe(new Date(now + 30 * DAY_MS).toISOString())
        expect(verified.json.account).toEqual({ id: expect.stringMatching(/^acct_[A-Za-z0-9]+$/), email: "session@example.com" })

        // The session is a Bearer credential for management calls.
        const account = yield* call("GET", "/my/account", { token: verified.json.access_token })
        expect(account.status).toBe(200)
        expect(account.json.email).toBe("session@example.com")

        // The first verify created the account; later sign-ins reach the same one with a new session.
        const again = yield* call("POST", "/auth/verify", { body: { token: yield* magicToken("session@example.com") } })
        expect(again.json.account.id).toBe(verified.json.account.id)
        expect(again.json.access_token).not.toBe(verified.json.access_token)
      }))

    it.effect("a sign-in token works once", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("once@example.com")
        const first = yield* call("POST", "/auth/verify", { body: { token } })
        expect(first.status).toBe(200)
        const second = yield* call("POST", "/auth/verify", { body: { token } })
        expectProblem(second, 401, "unauthenticated")
        expect(second.text).not.toContain(token)
      }))

    it.effect("a sign-in token sent malformed is 400 without being echoed, and still works after", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("echo@example.com")
        for (const body of [{ token: [token] }, { token: { value: token } }, { token: token + "x".repeat(300) }]) {
          const reply = yield* call("POST", "/auth/verify", { body })
          expectProblem(reply, 400, "invalid_request")
          expect(reply.json.errors.map((e: any) => e.field)).toEqual(["token"])
          expect(reply.text).not.toContain(token)
        }
        expect((yield* call("POST", "/auth/verify", { body: { token } })).status).toBe(200)
      }))

    it.effect("a sign-in token expires after 15 minutes", () =>
      Effect.gen(function*() {
        const early = yield* magicToken("early@example.com")
        const late = yield* magicToken("late@example.com")
        yield* TestClock.adjust("899 seconds")
        const inTime = yield* call("POST", "/auth/verify", { body: { token: early } })
        expect(inTime.status).toBe(200)
        yield* TestClock.adjust("1 second")
        const expired = yield* call("POST", "/auth/verify", { body: { token: late } })
        expectProblem(expired, 401, "unauthenticated")
      }))
  })
})

describe("credentials on management calls", () => {
  layer(TestApp())((it) => {
    const management: ReadonlyArray<readonly ["GET" | "POST" | "PATCH" | "DELETE", string, unknown?]> = [
      ["GET", "/my/keys"],
      ["POST", "/my/keys"],
      ["DELETE", "/my/keys/key_unknown"],
      ["GET", "/my/account"],
      ["PATCH", "/my/account", { storefront_tagline: "hello" }],
      ["GET", "/my/stores"],
      ["PATCH", "/repos/Octo-Org/Widget", { price_usd: "1.00" }],
      ["DELETE", "/repos/Octo-Org/Widget"]
    ]
    const badCredentials: ReadonlyArray<readonly [string, string | undefined]> = [
      ["no credential", undefined],
      ["garbage", "not-a-credential"],
      ["an unknown session-shaped token", "A".repeat(43)],
      ["a key with a wrong checksum", "rmkt_" + "a".repeat(36)],
      ["a well-formed key that was never issued", formatApiKey("b".repeat(30))]
    ]

    it.effect("missing, garbage and unknown credentials are 401 with WWW-Authenticate: Bearer", () =>
      Effect.gen(function*() {
        // A real listing exists, so a 401 cannot be a 404 in disguise.
        const { key } = yield* signInWithKey("owner@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00" }, key)
        for (const [label, token] of badCredentials) {
          for (const [method, path, body] of management) {
            const reply = yield* call(method, path, { ...(token === undefined ? {} : { token }), ...(body === undefined ? {} : { body }) })
            expect({ label, method, path, status: reply.status }).toEqual({ label, method, path, status: 401 })
            expectProblem(reply, 401, "unauthenticated")
            expect(reply.headers["www-authenticate"]).toBe("Bearer")
            if (token !== undefined) expect(reply.text).not.toContain(token)
          }
        }
        // The listing was not touched by any of them.
        const page = yield* call("GET", "/r/Octo-Org/Widget", { headers: { accept: "application/json" } })
        expect(page.json.price_usd).toBe("5.00")
      }))

    it.effect("a bad credential on POST /repos is 401, never a silent anonymous listing", () =>
      Effect.gen(function*() {
        const reply = yield* listRepo({ host_url: "https://github.com/octo-org/gadget", price_usd: "1.00" }, "garbage")
        expectProblem(reply, 401, "unauthenticated")
        expect(reply.headers["www-authenticate"]).toBe("Bearer")
        const page = yield* call("GET", "/r/Octo-Org/Gadget", { headers: { accept: "application/json" } })
        expectProblem(page, 404, "not_found")
      }))

  })
})

describe("public pages", () => {
  layer(TestApp())((it) => {
    it.effect("public pages need no credential", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("owner@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00" }, key)
        const owner = yield* call("GET", "/r/Octo-Org")
        expect(owner.status).toBe(200)
        expect(owner.json.inventory.map((i: any) => i.repo)).toEqual(["Octo-Org/Widget"])
        const repo = yield* call("GET", "/r/Octo-Org/Widget", { headers: { accept: "application/json" } })
        expect(repo.status).toBe(200)
        expect(repo.json.repo).toBe("Octo-Org/Widget")
      }))
  })
})

describe("session lifetime", () => {
  layer(TestApp())((it) => {
    it.effect("a session works for 30 days, then is refused", () =>
      Effect.gen(function*() {
        const session = yield* signIn("long@example.com")
        yield* TestClock.adjust(30 * DAY_MS - 1000)
        const stillValid = yield* call("GET", "/my/account", { token: session })
        expect(stillValid.status).toBe(200)
        yield* TestClock.adjust("1 second")
        const expired = yield* call("GET", "/my/account", { token: session })
        expectProblem(expired, 401, "unauthenticated")
        expect(expired.headers["www-authenticate"]).toBe("Bearer")
      }))
  })
})

describe("magic-link rate limits", () => {
  layer(TestApp())((it) => {
    // Issue 12 #8: the per-email limit never answers 429 (that let strangers lock the owner out of sign-in).
    it.effect("past 5 links for one email within 15 minutes: still 202, no more mail, the mailed links work; other emails still work", () =>
      Effect.gen(function*() {
        const ask = (email: string) => call("POST", "/auth/magic-link", { body: { email } })
        for (let i = 0; i < 5; i++) expect((yield* ask("busy@example.com")).status).toBe(202)
        const mailsBefore = yield* Effect.flatMap(SentMail, (m) => m.all)
        // The limit is per address, whatever its case.
        const sixth = yield* ask("BUSY@example.com")
        expect({ status: sixth.status, body: sixth.json }).toEqual({ status: 202, body: { sent: true, delivery: "email" } })
        expect((yield* Effect.flatMap(SentMail, (m) => m.all)).length).toBe(mailsBefore.length)
        const last = mailsBefore.filter((m) => m.to === "busy@example.com").at(-1)!
        const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(last.text)![1]!)
        expect((yield* call("POST", "/auth/verify", { body: { token } })).status).toBe(200)
        expect((yield* ask("calm@example.com")).status).toBe(202)
        expect((yield* Effect.flatMap(SentMail, (m) => m.all)).length).toBe(mailsBefore.length + 1)

        yield* TestClock.adjust("15 minutes")
        expect((yield* ask("busy@example.com")).status).toBe(202)
        expect((yield* Effect.flatMap(SentMail, (m) => m.all)).length).toBe(mailsBefore.length + 2)
      }))
  })
})

describe("magic-link rate limit per client address", () => {
  layer(TestApp())((it) => {
    it.effect("one client address gets 20 links an hour, then 429 with Retry-After", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 20; i++) {
          const reply = yield* call("POST", "/auth/magic-link", { body: { email: `person${i}@example.com` } })
          expect({ i, status: reply.status }).toEqual({ i, status: 202 })
        }
        const refused = yield* call("POST", "/auth/magic-link", { body: { email: "one-more@example.com" } })
        expectProblem(refused, 429, "rate_limited")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
      }))
  })
})

describe("sign-in links written to the log (no SMTP_URL: the development mailer)", () => {
  layer(TestAppWith(MailerLog))((it) => {
    it.effect("POST /auth/magic-link answers {sent:true, delivery:\"log\"}: the same contract, and where the link went", () =>
      Effect.gen(function*() {
        const reply = yield* call("POST", "/auth/magic-link", { body: { email: "log@example.com" } })
        expect(reply.status).toBe(202)
        expect(reply.json).toEqual({ sent: true, delivery: "log" })
      }))

    it.effect("the sign-in page says the link is written to the server log, before and after asking", () =>
      Effect.gen(function*() {
        const form = expectPage(yield* htmlGet("/signin"), 200)
        expect(form).toContain("This server sends no mail")
        expect(form).not.toContain("we email you a link")
        const sent = expectPage(yield* formPost("/signin", { email: "log-page@example.com" }), 200)
        expect(sent).toContain("<h1>Sign-in link written to the server log</h1>")
        expect(sent).toContain("<strong>log-page@example.com</strong>")
        expect(sent).not.toContain("Check your mail")
        expect(sent).not.toMatch(/token=/)
      }))
  })
})

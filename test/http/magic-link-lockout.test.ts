import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { call, TestApp } from "../support/app.js"
import { callFrom } from "../support/clients.js"

/**
 * Issue 12, finding 8: strangers asking for sign-in links for someone else's email must not lock that person
 * out of sign-in, and must not be able to bury their mailbox either. At most 5 links per email are mailed per
 * 15 minutes (a link's lifetime), across all client addresses; past that the answer is still 202
 * `{sent:true}` (no enumeration) but no mail goes out, while every link mailed in the window still works.
 */
const VICTIM = "victim@example.com"

const mailsTo = (email: string) => Effect.map(Effect.flatMap(SentMail, (m) => m.all), (all) => all.filter((m) => m.to === email))
const tokenOf = (text: string) => decodeURIComponent(/[?&]token=([^\s&]+)/.exec(text)![1]!)

describe("magic links: an attacker cannot lock the owner of an email out", () => {
  layer(TestApp())((it) => {
    it.effect("after many requests from several addresses for victim@, the victim still gets a working link and a session", () =>
      Effect.gen(function*() {
        for (const attacker of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
          for (let i = 0; i < 10; i++) {
            const reply = yield* callFrom(attacker, "POST", "/auth/magic-link", { body: { email: VICTIM } })
            expect({ attacker, i, status: reply.status, body: reply.json }).toEqual({ attacker, i, status: 202, body: { sent: true, delivery: "email" } })
          }
        }
        // The mailbox is not buried: 30 requests, 5 mails.
        expect(yield* mailsTo(VICTIM)).toHaveLength(5)

        // The victim asks from their own address: the same answer, and a link in the mailbox works.
        const asked = yield* call("POST", "/auth/magic-link", { body: { email: "Victim@Example.com" } })
        expect({ status: asked.status, body: asked.json }).toEqual({ status: 202, body: { sent: true, delivery: "email" } })
        const mails = yield* mailsTo(VICTIM)
        expect(mails).toHaveLength(5)
        const verified = yield* call("POST", "/auth/verify", { body: { token: tokenOf(mails.at(-1)!.text) } })
        expect(verified.status, verified.text).toBe(200)
        const account = yield* call("GET", "/my/account", { token: verified.json.access_token })
        expect(account.json.email).toBe(VICTIM)
        // Every other link mailed in the window still works too (the oldest one included).
        expect((yield* call("POST", "/auth/verify", { body: { token: tokenOf(mails[0]!.text) } })).status).toBe(200)

        // Once the window has passed, a request mails a fresh link again.
        yield* TestClock.adjust("15 minutes")
        expect((yield* callFrom("127.0.0.5", "POST", "/auth/magic-link", { body: { email: VICTIM } })).status).toBe(202)
        expect((yield* call("POST", "/auth/magic-link", { body: { email: VICTIM } })).status).toBe(202)
        expect(yield* mailsTo(VICTIM)).toHaveLength(7)
      }))
  })
})

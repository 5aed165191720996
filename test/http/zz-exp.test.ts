import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock, Option } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { call, signIn, TestApp } from "../support/app.js"

describe("exp", () => {
  it.layer(TestApp())((it) => {
    it.effect("clock", () =>
      Effect.gen(function*() {
        yield* call("POST", "/auth/magic-link", { body: { email: "a@example.com" } })
        const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
        const token = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail.text)![1]!)
        const v = yield* call("POST", "/auth/verify", { body: { token } })
        console.log(v.text)
        yield* TestClock.adjust("20 minutes")
        yield* call("POST", "/auth/magic-link", { body: { email: "a@example.com" } })
        const mail2 = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
        const token2 = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail2.text)![1]!)
        const v2 = yield* call("POST", "/auth/verify", { body: { token: token2 } })
        console.log(v2.text)
      }))
    it.effect("clock2", () =>
      Effect.gen(function*() {
        yield* call("POST", "/auth/magic-link", { body: { email: "a@example.com" } })
        const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
        const token = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail.text)![1]!)
        const v = yield* call("POST", "/auth/verify", { body: { token } })
        console.log(v.text)
      }))
  })
})

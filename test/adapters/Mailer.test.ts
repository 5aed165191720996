import { createServer } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, Option } from "effect"
import { MailerLive } from "../../adapters/mail/MailerLive.js"
import { MailerLog } from "../../adapters/mail/MailerLog.js"
import { MailerSmtp } from "../../adapters/mail/MailerSmtp.js"
import { MailerMemory, SentMail } from "../../adapters/memory/MailerMemory.js"
import { type Mail, Mailer } from "../../ports/Mailer.js"
import { startSmtpRecorder } from "../support/smtp.js"

/** A real SMTP server on loopback that records what it receives, closed with the test's scope. */
const smtpServer = Effect.acquireRelease(Effect.promise(startSmtpRecorder), (smtp) => Effect.promise(smtp.close))

/** A loopback port with nothing listening on it. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const withConfig = (config: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(config))))

const captureLogs = (into: Array<string>) =>
  Logger.add(Logger.make(({ message }) => into.push(Array.isArray(message) ? message.join(" ") : String(message))))

const magicLink: Mail = {
  to: "seller@example.com",
  subject: "Your repomarket sign-in link",
  text: "Sign in: http://localhost:3000/auth/verify?token=abc123\nThe link works for 15 minutes.\n"
}

describe("MailerSmtp", () => {
  it.scopedLive("delivers a mail to a real SMTP server", () =>
    Effect.gen(function*() {
      const { port, received } = yield* smtpServer
      yield* Effect.flatMap(Mailer, (mailer) => mailer.send(magicLink)).pipe(
        Effect.provide(MailerSmtp.pipe(Layer.provide(withConfig({ SMTP_URL: `smtp://127.0.0.1:${port}` }))))
      )
      expect(received).toHaveLength(1)
      const mail = received[0]!
      expect(mail.to).toEqual(["seller@example.com"])
      expect(mail.from).toBe("no-reply@localhost")
      expect(mail.raw).toMatch(/^Subject: Your repomarket sign-in link\r?$/m)
      expect(mail.raw).toMatch(/^From: repomarket <no-reply@localhost>\r?$/m)
      expect(mail.raw).toContain("Sign in: http://localhost:3000/auth/verify?token=abc123")
    }))

  it.scopedLive("uses MAIL_FROM and sends the html part when there is one", () =>
    Effect.gen(function*() {
      const { port, received } = yield* smtpServer
      yield* Effect.flatMap(Mailer, (mailer) => mailer.send({ ...magicLink, html: "<p>Sign in</p>" })).pipe(
        Effect.provide(
          MailerSmtp.pipe(
            Layer.provide(withConfig({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: "Market <mail@market.test>" }))
          )
        )
      )
      expect(received[0]?.from).toBe("mail@market.test")
      expect(received[0]?.raw).toContain("<p>Sign in</p>")
    }))

  it.scopedLive("maps a failed delivery to MailError without the credentials", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* Effect.flatMap(Mailer, (mailer) => Effect.flip(mailer.send(magicLink))).pipe(
        Effect.provide(
          MailerSmtp.pipe(Layer.provide(withConfig({ SMTP_URL: `smtp://mailuser:pa55word@127.0.0.1:${port}` })))
        )
      )
      expect(error._tag).toBe("MailError")
      expect(error.message).toMatch(/^SMTP delivery failed/)
      expect(error.message).not.toContain("pa55word")
      expect(error.message).not.toContain("mailuser")
    }))

  it.effect("refuses a malformed SMTP_URL at construction without echoing it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(Mailer, MailerSmtp.pipe(Layer.provide(withConfig({ SMTP_URL: "http://user:pa55word@mail" }))))
      )
      expect(String(error)).toContain("SMTP_URL")
      expect(String(error)).not.toContain("pa55word")
    }))
})

describe("MailerLog", () => {
  it.effect("writes the mail to the log, marked as the development mailer", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      yield* Effect.flatMap(Mailer, (mailer) => mailer.send(magicLink)).pipe(
        Effect.provide(MailerLog),
        Effect.provide(captureLogs(logs))
      )
      const line = logs.join("\n")
      expect(line).toContain("development mailer")
      expect(line).toContain("To: seller@example.com")
      expect(line).toContain("Subject: Your repomarket sign-in link")
      expect(line).toContain("http://localhost:3000/auth/verify?token=abc123")
    }))
})

describe("MailerLive", () => {
  it.effect("logs when SMTP_URL is unset or empty", () =>
    Effect.gen(function*() {
      for (const config of [{}, { SMTP_URL: "" }]) {
        const logs: Array<string> = []
        yield* Effect.flatMap(Mailer, (mailer) => mailer.send(magicLink)).pipe(
          Effect.provide(MailerLive.pipe(Layer.provide(withConfig(config)))),
          Effect.provide(captureLogs(logs))
        )
        expect(logs.join("\n")).toContain("development mailer")
      }
    }))

  it.scopedLive("sends over SMTP when SMTP_URL is set", () =>
    Effect.gen(function*() {
      const { port, received } = yield* smtpServer
      const logs: Array<string> = []
      yield* Effect.flatMap(Mailer, (mailer) => mailer.send(magicLink)).pipe(
        Effect.provide(MailerLive.pipe(Layer.provide(withConfig({ SMTP_URL: `smtp://127.0.0.1:${port}` })))),
        Effect.provide(captureLogs(logs))
      )
      expect(received.map((r) => r.to)).toEqual([["seller@example.com"]])
      expect(logs.join("\n")).not.toContain("development mailer")
    }))
})

describe("MailerMemory", () => {
  it.effect("captures sent mails in order", () =>
    Effect.gen(function*() {
      const mailer = yield* Mailer
      const sent = yield* SentMail
      expect(yield* sent.last).toEqual(Option.none())
      yield* mailer.send(magicLink)
      yield* mailer.send({ to: "buyer@example.com", subject: "Second", text: "two" })
      expect((yield* sent.all).map((m) => m.to)).toEqual(["seller@example.com", "buyer@example.com"])
      expect(yield* sent.last).toEqual(Option.some({ to: "buyer@example.com", subject: "Second", text: "two" }))
      yield* sent.clear
      expect(yield* sent.all).toEqual([])
    }).pipe(Effect.provide(MailerMemory)))

  it.effect("keeps separate mailboxes per layer construction", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(Mailer, (mailer) => mailer.send(magicLink)).pipe(Effect.provide(MailerMemory))
      const all = yield* Effect.flatMap(SentMail, (sent) => sent.all).pipe(Effect.provide(MailerMemory))
      expect(all).toEqual([])
    }))
})

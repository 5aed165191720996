import { Effect, Layer } from "effect"
import { Mailer } from "../../ports/Mailer.js"

/**
 * Development mailer, used when no `SMTP_URL` is set: nothing is sent, the mail (magic link included) is
 * written to the log so a developer can follow it. Never use it where others can read the log. Logged as a
 * warning: mail that was not sent is worth noticing, and it still shows with `LOG_LEVEL=WARN`.
 */
export const MailerLog = Layer.succeed(Mailer, {
  delivery: "log",
  send: (mail) =>
    Effect.logWarning(
      `[development mailer: SMTP_URL is not set, nothing was sent]\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}`
    ).pipe(Effect.annotateLogs({ mailer: "development" }))
})

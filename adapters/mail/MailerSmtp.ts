import { Config, ConfigError, Effect, Either, Layer, Redacted } from "effect"
import type { Transporter } from "nodemailer"
import { NodemailerModule } from "../LazyModules.js"
import { MailError, Mailer } from "../../ports/Mailer.js"

// The URL carries the SMTP password, so it is never echoed back, not even in a configuration error.
// Nested after mapOrFail so that the error's path names the setting.
const smtpUrl = Config.redacted().pipe(
  Config.mapOrFail((url) => {
    const parsed = URL.canParse(Redacted.value(url)) ? new URL(Redacted.value(url)) : undefined
    return parsed !== undefined && (parsed.protocol === "smtp:" || parsed.protocol === "smtps:") && parsed.hostname !== ""
      ? Either.right(url)
      : Either.left(ConfigError.InvalidData([], "SMTP_URL must be an smtp:// or smtps:// URL with a host"))
  }),
  Config.nested("SMTP_URL")
)

const mailFrom = Config.string("MAIL_FROM").pipe(
  Config.withDefault("repomarket <no-reply@localhost>"),
  Config.validate({ message: "MAIL_FROM must hold an email address", validation: (from) => from.includes("@") })
)

const field = (error: unknown, name: string): string | undefined => {
  if (typeof error !== "object" || error === null || !(name in error)) return undefined
  const value: unknown = (error as Record<string, unknown>)[name]
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined
}

/**
 * Only nodemailer's error code and the SMTP status are kept: its messages may quote the server's reply or
 * the connection details, which can include the user name.
 */
const toMailError = (error: unknown): MailError => {
  const details = [field(error, "code"), field(error, "responseCode")].filter((d) => d !== undefined)
  return new MailError({ message: `SMTP delivery failed${details.length > 0 ? ` (${details.join(", ")})` : ""}` })
}

/** Mail over SMTP (`SMTP_URL`, `MAIL_FROM`); the transport is closed when the layer is released. */
export const MailerSmtp = Layer.scoped(
  Mailer,
  Effect.gen(function*() {
    const url = yield* smtpUrl
    const from = yield* mailFrom
    // nodemailer is loaded, and the transport made, with the first mail rather than when the layer is built:
    // a Lambda instance's init phase, and most requests, send none (adapters/LazyModules.ts). Making the
    // transport opens no connection.
    const nodemailerModule = yield* NodemailerModule
    let made: Promise<Transporter> | undefined
    const transport = () =>
      made ??= nodemailerModule().then(({ default: nodemailer }) =>
        // nodemailer waits minutes by default; a sign-in request should not. Query options in SMTP_URL win.
        nodemailer.createTransport({
          url: Redacted.value(url),
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000
        })
      )
    yield* Effect.addFinalizer(() => Effect.promise(() => made?.then((t) => t.close(), () => undefined) ?? Promise.resolve()))
    return {
      send: (mail) =>
        Effect.tryPromise({
          try: () =>
            transport().then((t) => t.sendMail({
              from,
              to: mail.to,
              subject: mail.subject,
              text: mail.text,
              ...(mail.html !== undefined ? { html: mail.html } : {})
            })),
          catch: toMailError
        }).pipe(Effect.asVoid, Effect.withSpan("Mailer.send"))
    }
  })
)

import { Config, Effect, Layer, Option, Redacted } from "effect"
import { MailerLog } from "./MailerLog.js"
import { MailerSmtp } from "./MailerSmtp.js"

/** SMTP when `SMTP_URL` is set (an empty value counts as unset), else the development log mailer. */
export const MailerLive = Layer.unwrapEffect(
  Config.option(Config.redacted("SMTP_URL")).pipe(
    Effect.map((url) =>
      Option.exists(url, (u) => Redacted.value(u).trim() !== "")
        ? MailerSmtp
        : MailerLog
    )
  )
)

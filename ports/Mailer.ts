import { Context, Data, type Effect } from "effect"

/** One outgoing mail. */
export interface Mail {
  /** The recipient's address. */
  readonly to: string
  /** The subject line. */
  readonly subject: string
  /** The plain-text body. */
  readonly text: string
  /** An optional HTML body, sent beside the text. */
  readonly html?: string
}

/** Raised by `Mailer.send` when the mail could not be handed over. */
export class MailError extends Data.TaggedError("MailError")<{ readonly message: string }> {}

/**
 * Where a mailer puts what it is given: `"email"`, handed to a mail server for the recipient; `"log"`, written
 * to the server's log and sent to no one (the development mailer, where no SMTP server is set).
 */
export type MailDelivery = "email" | "log"

/** Outgoing mail (the sign-in links). */
export class Mailer extends Context.Tag("repomarket/Mailer")<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<void, MailError>
  /** Where `send` puts a mail; absent means `"email"`. Said to whoever asked for a sign-in link. */
  readonly delivery?: MailDelivery
}>() {}

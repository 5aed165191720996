import { Context, Data, type Effect } from "effect"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string
}

export class MailError extends Data.TaggedError("MailError")<{ readonly message: string }> {}

export class Mailer extends Context.Tag("ports/Mailer")<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<void, MailError>
}>() {}

import { Context, Effect, Layer, Option, Ref } from "effect"
import { type Mail, Mailer } from "../../ports/Mailer.js"

/** What the memory mailer has captured, oldest first; for tests. */
export class SentMail extends Context.Tag("repomarket/SentMail")<SentMail, {
  readonly all: Effect.Effect<ReadonlyArray<Mail>>
  readonly last: Effect.Effect<Option.Option<Mail>>
  readonly clear: Effect.Effect<void>
}>() {}

/** A Mailer that keeps every mail in memory, and the SentMail view of the same mails. */
export const MailerMemory: Layer.Layer<Mailer | SentMail> = Layer.effectContext(
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<Mail>>([])
    return Context.make(Mailer, {
      send: (mail) => Ref.update(sent, (mails) => [...mails, mail])
    }).pipe(
      Context.add(SentMail, {
        all: Ref.get(sent),
        last: Effect.map(Ref.get(sent), (mails) => Option.fromNullable(mails.at(-1))),
        clear: Ref.set(sent, [])
      })
    )
  })
)

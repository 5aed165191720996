import { Context, Data, type Effect } from "effect"

export class WebhookSendError extends Data.TaggedError("WebhookSendError")<{
  readonly reason: "refused_target" | "timeout" | "network"
  readonly message: string
}> {}

/** POSTs one signed event body; redirects are not followed. */
export class WebhookSender extends Context.Tag("ports/WebhookSender")<WebhookSender, {
  /** Checks a URL before it is saved: scheme and the addresses it resolves to. */
  readonly checkTarget: (url: string) => Effect.Effect<void, WebhookSendError>
  readonly post: (request: {
    readonly url: string
    readonly body: string
    readonly headers: Readonly<Record<string, string>>
    readonly timeoutMs: number
  }) => Effect.Effect<{ readonly status: number }, WebhookSendError>
}>() {}

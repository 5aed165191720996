import { Context, Data, type Effect, type Redacted } from "effect"

/** Raised by the WebhookSender: a target refused by the network policy, a timeout, or a network failure. */
export class WebhookSendError extends Data.TaggedError("WebhookSendError")<{
  readonly reason: "refused_target" | "timeout" | "network"
  readonly message: string
}> {}

/**
 * POSTs one event body, signed with the account's webhook secret at the given unix time (`X-Service-Signature:
 * t=<unix>,v1=<hex hmac-sha256 of "<t>.<body>">`). Redirects are not followed; the target's addresses are
 * checked again when connecting.
 */
export class WebhookSender extends Context.Tag("repomarket/WebhookSender")<WebhookSender, {
  /** Checks a URL before it is saved: scheme and the addresses it resolves to. */
  readonly checkTarget: (url: string) => Effect.Effect<void, WebhookSendError>
  readonly post: (request: {
    readonly url: string
    readonly body: string
    readonly secret: Redacted.Redacted<string>
    readonly timestamp: number
    readonly timeoutMs: number
  }) => Effect.Effect<{ readonly status: number }, WebhookSendError>
}>() {}

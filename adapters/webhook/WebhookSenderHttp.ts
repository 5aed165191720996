import { Config, Effect, Layer } from "effect"
import { WebhookSender, WebhookSendError } from "../../ports/WebhookSender.js"
import { checkTarget } from "./TargetPolicy.js"

/**
 * POSTs webhook bodies with fetch: redirects are not followed, each attempt has its own timeout, and the
 * target is checked again right before sending (it may resolve elsewhere than when it was saved).
 */
export const WebhookSenderHttp = Layer.effect(
  WebhookSender,
  Effect.gen(function*() {
    const allowPrivate = yield* Config.boolean("WEBHOOK_ALLOW_PRIVATE_NETWORKS").pipe(Config.withDefault(false))
    const check = (url: string) =>
      Effect.flatMap(Effect.promise(() => checkTarget(url, allowPrivate)), (v) =>
        v.ok ? Effect.void : Effect.fail(new WebhookSendError({ reason: "refused_target", message: v.message })))
    return {
      checkTarget: check,
      post: ({ url, body, headers, timeoutMs }) =>
        check(url).pipe(
          Effect.zipRight(Effect.tryPromise({
            try: (signal) =>
              fetch(url, {
                method: "POST",
                body,
                headers: { "content-type": "application/json", "user-agent": "repomarket-webhooks/1", ...headers },
                redirect: "manual",
                signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
              }).then(async (res) => {
                await res.body?.cancel().catch(() => undefined)
                return { status: res.status }
              }),
            catch: (e) =>
              (e as Error)?.name === "TimeoutError"
                ? new WebhookSendError({ reason: "timeout", message: `no answer within ${timeoutMs} ms` })
                : new WebhookSendError({ reason: "network", message: "connection failed" })
          }))
        )
    }
  })
)

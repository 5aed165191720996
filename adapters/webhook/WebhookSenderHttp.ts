import type { LookupAddress } from "node:dns"
import { lookup as dnsLookup } from "node:dns"
import { Config, Effect, Layer, Redacted } from "effect"
import type { Agent } from "undici"
import { UndiciModule } from "../LazyModules.js"
import { WebhookSender, WebhookSendError } from "../../ports/WebhookSender.js"
import { signatureHeader, SIGNATURE_HEADER } from "./Signature.js"
import { checkTarget, isForbiddenAddress } from "./TargetPolicy.js"

/**
 * POSTs webhook bodies. Redirects are not followed; each attempt has its own timeout; and the addresses a
 * host name resolves to are checked again inside the connection's own DNS lookup, so a name that resolved
 * to a public address when it was saved cannot be re-pointed at a private one (DNS rebinding).
 */
export const WebhookSenderHttp = Layer.scoped(
  WebhookSender,
  Effect.gen(function*() {
    const allowPrivate = yield* Config.boolean("WEBHOOK_ALLOW_PRIVATE_NETWORKS").pipe(Config.withDefault(false))
    const guardedLookup = (
      hostname: string,
      options: object,
      callback: (err: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
    ) =>
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, [])
        const list = addresses as Array<LookupAddress>
        if (!allowPrivate && list.some((a) => isForbiddenAddress(a.address))) {
          return callback(Object.assign(new Error("webhook target resolves to a forbidden address"), { code: "EFORBIDDEN" }), [])
        }
        callback(null, list)
      })
    // undici (1 MB of script) is loaded with the first post, not when the layer is built: a Lambda instance's
    // init phase, and most of its requests, send no webhook (adapters/LazyModules.ts).
    const undici = yield* UndiciModule
    let connection: Promise<{ readonly agent: Agent; readonly fetch: typeof import("undici").fetch }> | undefined
    const connect = () =>
      connection ??= undici().then(({ Agent, fetch }) => ({
        agent: new Agent({ connect: { lookup: guardedLookup as never }, keepAliveTimeout: 10_000 }),
        fetch
      }))
    yield* Effect.addFinalizer(() => Effect.promise(() => connection?.then(({ agent }) => agent.close(), () => undefined) ?? Promise.resolve()))

    // Bounded, so a slow resolver cannot stretch an attempt past its outbox lease.
    const check = (url: string) =>
      Effect.flatMap(Effect.promise(() => checkTarget(url, allowPrivate)), (v) =>
        v.ok ? Effect.void : Effect.fail(new WebhookSendError({ reason: "refused_target", message: v.message }))).pipe(
        Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new WebhookSendError({ reason: "timeout", message: "the target's name did not resolve in time" }) })
      )

    return {
      checkTarget: check,
      post: ({ body, secret, timeoutMs, timestamp, url }) =>
        check(url).pipe(
          Effect.zipRight(Effect.tryPromise({
            try: async (signal) => {
              const { agent, fetch } = await connect()
              const res = await fetch(url, {
                method: "POST",
                body,
                headers: {
                  "content-type": "application/json",
                  "user-agent": "repomarket-webhooks/1",
                  [SIGNATURE_HEADER]: signatureHeader(Redacted.value(secret), timestamp, body)
                },
                redirect: "manual",
                dispatcher: agent,
                signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
              })
              await res.body?.cancel().catch(() => undefined)
              return { status: res.status }
            },
            catch: (e) => {
              const error = e as { name?: string; cause?: { code?: string } }
              if (error?.name === "TimeoutError") {
                return new WebhookSendError({ reason: "timeout", message: `no answer within ${timeoutMs} ms` })
              }
              if (error?.cause?.code === "EFORBIDDEN") {
                return new WebhookSendError({ reason: "refused_target", message: "target resolves to a forbidden address" })
              }
              return new WebhookSendError({ reason: "network", message: "connection failed" })
            }
          }))
        )
    }
  })
)

import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { WebhookSender } from "../../ports/WebhookSender.js"
import { receiver } from "./support.js"

/*
 * DNS rebinding: `rebind.test` answers a public address to the check made before connecting (node:dns/promises)
 * and loopback to the lookup made while connecting (node:dns, the one the HTTP agent uses). The second
 * check, inside the connection, is the one that must refuse.
 */
const PUBLIC = "93.184.216.34"
vi.mock("node:dns/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns/promises")>()
  const lookup = (host: string, options?: unknown) =>
    host === "rebind.test" ? Promise.resolve([{ address: PUBLIC, family: 4 }]) : (actual.lookup as Function)(host, options)
  return { ...actual, default: { ...actual, lookup }, lookup }
})
vi.mock("node:dns", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns")>()
  const lookup = (host: string, options: unknown, callback: Function) =>
    host === "rebind.test" ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : (actual.lookup as Function)(host, options, callback)
  return { ...actual, default: { ...actual, lookup }, lookup }
})

const senderWith = (config: Record<string, string>) =>
  WebhookSenderHttp.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(config))))))

const post = (url: string) =>
  Effect.flatMap(WebhookSender, (s) =>
    s.post({ url, body: "{}", secret: Redacted.make("whsec_test"), timestamp: Math.floor(Date.now() / 1000), timeoutMs: 5_000 }))

describe("WebhookSenderHttp, a host name re-pointed at loopback after the check", () => {
  it.scoped("default configuration: the connection's own lookup refuses it and nothing reaches the receiver", () =>
    Effect.gen(function*() {
      const hook = yield* receiver()
      // The pre-connection check passes: it sees the public address.
      yield* Effect.flatMap(WebhookSender, (s) => s.checkTarget(`https://rebind.test:${hook.port}/hook`))
      const refused = yield* Effect.flip(post(`https://rebind.test:${hook.port}/hook`))
      expect(refused).toMatchObject({ _tag: "WebhookSendError", reason: "refused_target", message: "target resolves to a forbidden address" })
      expect(hook.connections()).toBe(0)
    }).pipe(Effect.provide(senderWith({}))))

  it.scoped("control: with private networks allowed the same name connects to the receiver (the mocked lookup is the one used)", () =>
    Effect.gen(function*() {
      const hook = yield* receiver()
      expect(yield* post(`http://rebind.test:${hook.port}/hook`)).toStrictEqual({ status: 200 })
      expect(hook.arrivals.map((a) => a.headers.host)).toStrictEqual([`rebind.test:${hook.port}`])
    }).pipe(Effect.provide(senderWith({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }))))
})

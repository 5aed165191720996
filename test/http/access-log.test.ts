import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { BASE_WALLET, call, signInWithKey, TestApp } from "../support/app.js"
import { listed, WIDGET_URL } from "../support/flows.js"

/**
 * Issue 12, finding 10: the access log never holds a secret. A receipt link (`/downloads/<token>`) is
 * bearer access to paid goods for 7 days; the sign-in link's token and the OAuth `code`/`state` ride in
 * query strings. The log is captured by replacing Effect's logger for the whole app, so every line the
 * server writes (guard and front door alike) is seen.
 */
const lines: Array<string> = []
const CaptureLog = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
)

const DOWNLOAD_TOKEN = "sale_AbCdEf0123456789.Zm9yZ2VkLXJlY2VpcHQtc2lnbmF0dXJl"
const VERIFY_TOKEN = "mGc3-secret-magic-token-Qx9"
const OAUTH_CODE = "oauth-code-7f3a9"
const OAUTH_STATE = "sealed-state-b81c"

describe("access log", () => {
  layer(TestApp().pipe(Layer.provide(CaptureLog)))((it) => {
    it.effect("never holds a receipt token, a sign-in token or an OAuth code/state", () =>
      Effect.gen(function*() {
        lines.length = 0
        yield* call("GET", `/downloads/${DOWNLOAD_TOKEN}`)
        yield* call("GET", `/downloads/${DOWNLOAD_TOKEN}/`)
        yield* call("GET", `/auth/verify?token=${VERIFY_TOKEN}`)
        yield* call("GET", `/auth/host/callback?code=${OAUTH_CODE}&state=${OAUTH_STATE}`)
        yield* call("GET", "/healthz")
        const log = lines.join("\n")
        // The requests were logged (so the test can fail), just without their secrets.
        expect(log).toContain("GET /downloads/[redacted] ")
        expect(log).toContain("GET /auth/verify ")
        expect(log).toContain("GET /auth/host/callback ")
        expect(log).toContain("GET /healthz 200")
        for (const secret of [DOWNLOAD_TOKEN, "Zm9yZ2VkLXJlY2VpcHQtc2lnbmF0dXJl", VERIFY_TOKEN, OAUTH_CODE, OAUTH_STATE]) {
          expect(log).not.toContain(secret)
        }
      }))
  })
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The answer's `X-Request-Id`, checked to be one of ours. */
const idOf = (reply: { readonly headers: Record<string, string> }) => {
  const id = reply.headers["x-request-id"]
  expect(id).toMatch(UUID)
  return id!
}

/*
 * With several hosts behind a balancer, the id a buyer quotes from an answer finds its log line on whichever
 * host served it. Every answer of the Node host names its request in `X-Request-Id`, and the access-log line
 * (the guard's and the front door's) ends with the same id. The id is the host's own: a client's header is
 * neither echoed nor logged.
 */
describe("request ids", () => {
  layer(TestApp().pipe(Layer.provide(CaptureLog)))((it) => {
    it.effect("every answer carries a fresh id of its own, and its access-log line ends with it", () =>
      Effect.gen(function*() {
        lines.length = 0
        const first = yield* call("GET", "/healthz")
        const forged = yield* call("GET", "/healthz", { headers: { "x-request-id": "forged-by-the-client" } })
        const missing = yield* call("GET", "/no-such-page")
        expect(missing.status).toBe(404)
        const ids = [first, forged, missing].map(idOf)
        expect(new Set(ids).size).toBe(3)
        const log = lines.join("\n")
        expect(log).toMatch(new RegExp(`GET /healthz 200 \\d+ms id=${ids[0]}$`, "m"))
        expect(log).toMatch(new RegExp(`GET /healthz 200 \\d+ms id=${ids[1]}$`, "m"))
        expect(log).toMatch(new RegExp(`GET /no-such-page 404 \\d+ms id=${ids[2]}$`, "m"))
        expect(log).not.toContain("forged-by-the-client")
      }))

    it.effect("an answer from the front door carries a fresh id too, never the remembered answer's", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("request-ids@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, key)
        lines.length = 0
        const json = { headers: { accept: "application/json" } }
        const fromApp = yield* call("GET", "/r/Octo-Org/Widget", json)
        const fromDoor = yield* call("GET", "/r/Octo-Org/Widget", json)
        expect([fromApp.status, fromDoor.status]).toEqual([200, 200])
        expect(fromDoor.text).toBe(fromApp.text)
        const [appId, doorId] = [idOf(fromApp), idOf(fromDoor)]
        expect(doorId).not.toBe(appId)
        const log = lines.join("\n")
        expect(log).toMatch(new RegExp(`GET /r/Octo-Org/Widget 200 \\d+ms id=${appId}$`, "m"))
        expect(log).toContain(`GET /r/Octo-Org/Widget 200 0ms (front door) id=${doorId}`)
      }))
  })
})

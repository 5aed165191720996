import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { call, TestApp } from "../support/app.js"

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

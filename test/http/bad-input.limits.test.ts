import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  ALL_BODY_TAKERS,
  authHeader,
  BODY_ENDPOINTS,
  expectInvalidField,
  expectNoServerError,
  expectProblem,

  raw,
  Seed,
  SeededApp,
  send,
  streamUntilAnswered,
  unchanged
} from "../support/badInput.js"

/**
 * Size and shape limits of request bodies: 413 over 64 KiB (declared, chunked, or counted in bytes rather than
 * characters), 400 for strings over their bounds and for absurd nesting, and bodies on endpoints without a payload.
 * Every refusal is problem+json and changes nothing.
 */

const LIMIT = 64 * 1024

describe("body size and shape limits", () => {
  layer(SeededApp({ email: "limits@example.com" }))((it) => {

    describe("bodies over 64 KiB are 413, also when chunked or counted in characters", () => {
      /** Valid JSON of exactly `bytes` bytes: an object padded with spaces. */
      const padded = (base: Record<string, string>, bytes: number) => {
        const json = JSON.stringify(base)
        return json + " ".repeat(bytes - Buffer.byteLength(json))
      }

      for (const endpoint of ALL_BODY_TAKERS) {
        it.effect(endpoint.label, () =>
          unchanged(Effect.gen(function*() {
            const base = "base" in endpoint ? endpoint.base : {}
            expectProblem(yield* send(endpoint, padded(base, LIMIT + 1)), 413, "payload_too_large")
            expectProblem(yield* send(endpoint, padded(base, 4 * LIMIT)), 413, "payload_too_large")
            const s = yield* Seed
            const chunked = yield* raw({
              method: endpoint.method,
              path: endpoint.path(s),
              headers: { ...(yield* authHeader(endpoint.auth)), "content-type": "application/json" },
              chunks: [padded(base, 40_000), " ".repeat(LIMIT + 1 - 40_000)]
            })
            expectProblem(chunked, 413, "payload_too_large")
          })))
      }

      it.effect("the limit counts bytes: 21,846 three-byte characters are over it", () =>
        unchanged(Effect.gen(function*() {
          const endpoint = BODY_ENDPOINTS.find((e) => e.label === "PATCH /my/account")!
          const body = JSON.stringify({ storefront_tagline: "€".repeat(21_846) })
          expect(body.length).toBeLessThan(LIMIT)
          expect(Buffer.byteLength(body)).toBeGreaterThan(LIMIT)
          expectProblem(yield* send(endpoint, body), 413, "payload_too_large")
        })))

      it.effect("exactly 64 KiB is accepted", () =>
        Effect.gen(function*() {
          const endpoint = BODY_ENDPOINTS.find((e) => e.label === "PATCH /my/account")!
          const reply = yield* send(endpoint, padded({}, LIMIT))
          expect(reply.status, reply.text).toBe(200)
        }))

      it.effect("a large declared Content-Length is refused", () =>
        unchanged(Effect.gen(function*() {
          const reply = yield* raw({
            method: "POST",
            path: "/repos",
            headers: { "content-type": "application/json" },
            body: padded({}, 10 * LIMIT)
          })
          expectProblem(reply, 413, "payload_too_large")
        })))
    })

    // The guard reads at most 1 MiB of a body: between 64 KiB and 1 MiB a chunked upload gets its 413; past
    // 1 MiB the platform cuts the connection instead (it destroys the socket when its cap trips). Either way
    // the server stops reading long before the client's 8 MiB, so a stranger cannot make it buffer more.
    it.effect("a chunked body is cut off near the limit instead of being buffered to its end", () =>
      Effect.gen(function*() {
        const result = yield* streamUntilAnswered("/repos", { "content-type": "application/json" }, 8 * 1024 * 1024)
        expect([413, -1]).toContain(result.status)
        // Answered or cut before the client got its 8 MiB out (loopback socket buffers hold a few MiB more
        // than the server read, so this is measured against the whole upload, not against the 1 MiB cap).
        expect(result.writtenWhenAnswered).toBeLessThan(8 * 1024 * 1024)
      }), 60_000)

    describe("strings over their bounds are 400 naming the field; secrets are never repeated", () => {
      for (const endpoint of BODY_ENDPOINTS) {
        it.effect(endpoint.label, () =>
          unchanged(Effect.gen(function*() {
            for (const [field, max] of Object.entries(endpoint.fields)) {
              for (const length of [max + 1, 50_000]) {
                const value = `${"x".repeat(length - 6)}SECRET`
                const reply = yield* send(endpoint, JSON.stringify({ ...endpoint.base, [field]: value }))
                expectInvalidField(reply, field)
                if (field === "host_pat" || field === "token") expect(reply.text).not.toContain("xxxxxxxxSECRET")
              }
            }
          })))
      }

      it.effect("domain bounds below the schema bounds: tagline, email, webhook URL, price", () =>
        unchanged(Effect.gen(function*() {
          const account = BODY_ENDPOINTS.find((e) => e.label === "PATCH /my/account")!
          expectInvalidField(yield* send(account, JSON.stringify({ storefront_tagline: "a".repeat(141) })), "storefront_tagline")
          expectInvalidField(yield* send(account, JSON.stringify({ storefront_tagline: "😀".repeat(141) })), "storefront_tagline")
          expectInvalidField(yield* send(account, JSON.stringify({ webhook_url: `https://example.com/${"a".repeat(2048)}` })), "webhook_url")
          const magic = BODY_ENDPOINTS.find((e) => e.label === "POST /auth/magic-link")!
          expectInvalidField(yield* send(magic, JSON.stringify({ email: `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(59)}.com` })), "email")
          expectInvalidField(yield* send(magic, JSON.stringify({ email: `${"a".repeat(65)}@example.com` })), "email")
          const patch = BODY_ENDPOINTS.find((e) => e.label === "PATCH /repos/:owner/:repo")!
          expectInvalidField(yield* send(patch, JSON.stringify({ price_usd: "1234567.00" })), "price_usd")
          expectInvalidField(yield* send(patch, JSON.stringify({ price_usd: "1.0000000000000000000000000000" })), "price_usd")
        })))

      it.effect("a 141-character tagline with a newline is refused; 140 emoji are accepted", () =>
        Effect.gen(function*() {
          const account = BODY_ENDPOINTS.find((e) => e.label === "PATCH /my/account")!
          yield* unchanged(Effect.gen(function*() {
            expectInvalidField(yield* send(account, JSON.stringify({ storefront_tagline: "line\u2028break" })), "storefront_tagline")
            expectInvalidField(yield* send(account, JSON.stringify({ storefront_tagline: "nul\u0000" })), "storefront_tagline")
          }))
          const ok = yield* send(account, JSON.stringify({ storefront_tagline: "😀".repeat(140) }))
          expect(ok.status, ok.text).toBe(200)
          expect(ok.json.storefront_tagline).toBe("😀".repeat(140))
          const restored = yield* send(account, JSON.stringify({ storefront_tagline: "Seeded storefront" }))
          expect(restored.status).toBe(200)
        }))
    })

    // Regression (was a bug): a deeply nested JSON value (a few KiB of "[" or {"a": ...}) passes the guard's JSON.parse, then the
    // framework's decode error tries to print the value it refused and overflows the stack: 500 internal_error
    // instead of 400, on every endpoint with a payload.
    describe("deeply nested JSON is a 400, not a stack overflow", () => {
      const nestedArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
      for (const endpoint of BODY_ENDPOINTS) {
        it.effect(endpoint.label, () =>
          unchanged(Effect.gen(function*() {
            const field = Object.keys(endpoint.fields)[0]!
            expectProblem(yield* send(endpoint, nestedArray(20_000)), 400)
            const inField = JSON.stringify({ ...endpoint.base, [field]: "DEEP" }).replace("\"DEEP\"", nestedArray(5_000))
            expectProblem(yield* send(endpoint, inField), 400)
          })))
      }

      it.effect("moderate nesting is an ordinary 400", () =>
        unchanged(Effect.gen(function*() {
          const endpoint = BODY_ENDPOINTS.find((e) => e.label === "PATCH /my/account")!
          expectInvalidField(yield* send(endpoint, `{"wallet_base":${nestedArray(200)}}`), "wallet_base")
          expectProblem(yield* send(endpoint, nestedArray(200)), 400)
        })))
    })

    describe("endpoints without a payload ignore or refuse a body, but never fail on it", () => {
      it.effect("GET endpoints with junk bodies", () =>
        unchanged(Effect.gen(function*() {
          const s = yield* Seed
          for (const path of ["/my/account", "/my/stores", "/my/keys", `/r/${s.owner}`, `/r/${s.owner}/${s.repo}`]) {
            for (const [type, body] of [["application/json", "{"], ["text/plain", "hello"], ["application/json", "x".repeat(LIMIT + 10)]] as const) {
              const reply = yield* raw({ method: "GET", path, headers: { ...(yield* authHeader("key")), "content-type": type }, body })
              expectNoServerError(reply, `GET ${path} with ${type}`)
            }
          }
        })))
    })
  })
})

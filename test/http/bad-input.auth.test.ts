import { describe, expect, layer } from "@effect/vitest"
import { type Context, Effect } from "effect"
import { formatApiKey } from "../../domain/rules/ApiKeyFormat.js"
import { BASE_WALLET_2, call } from "../support/app.js"
import { expectNoServerError, expectProblem, raw, Seed, SeededApp, unchanged } from "../support/badInput.js"

/**
 * Missing, malformed, foreign-scheme, unknown and revoked credentials on every management endpoint: always 401
 * problem+json with `WWW-Authenticate: Bearer`, and the request has no effect. Each request below would change
 * something if it were let through (revoke a key, take the listing down, change a price or the tagline).
 */

type SeedValue = Context.Tag.Service<Seed>

interface Managed {
  readonly label: string
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: (s: SeedValue) => string
  readonly body?: unknown
}

const MANAGEMENT: ReadonlyArray<Managed> = [
  { label: "POST /my/keys", method: "POST", path: () => "/my/keys" },
  { label: "GET /my/keys", method: "GET", path: () => "/my/keys" },
  { label: "DELETE /my/keys/:id", method: "DELETE", path: (s) => `/my/keys/${s.spareKeyId}` },
  { label: "GET /my/account", method: "GET", path: () => "/my/account" },
  { label: "PATCH /my/account", method: "PATCH", path: () => "/my/account", body: { storefront_tagline: "Hijacked", wallet_base: BASE_WALLET_2 } },
  { label: "GET /my/stores", method: "GET", path: () => "/my/stores" },
  { label: "PATCH /repos/:owner/:repo", method: "PATCH", path: (s) => `/repos/${s.owner}/${s.repo}`, body: { price_usd: "0.01", wallet_base: BASE_WALLET_2 } },
  { label: "DELETE /repos/:owner/:repo", method: "DELETE", path: (s) => `/repos/${s.owner}/${s.repo}` },
  { label: "POST /auth/host/start", method: "POST", path: () => "/auth/host/start" }
]

/** Authorization header values that must all be refused; `undefined` sends no header at all. */
const badCredentials = (s: SeedValue, revoked: string): ReadonlyArray<[string, string | undefined]> => {
  const key = s.keys[0]!
  const wellFormedUnknown = formatApiKey("AAAAAAAAAABBBBBBBBBBCCCCCCCCCC")
  const badChecksum = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`
  return [
    ["no header", undefined],
    ["empty", ""],
    ["scheme only", "Bearer"],
    ["scheme and space", "Bearer "],
    ["Basic", "Basic dXNlcjpwYXNzd29yZA=="],
    ["Basic with the key as password", `Basic ${Buffer.from(`user:${key}`).toString("base64")}`],
    ["Digest", "Digest username=\"seller\", realm=\"repomarket\""],
    ["Token scheme with a real key", `Token ${key}`],
    ["a real key without scheme", key],
    ["garbage", "Bearer garbage"],
    ["garbage with symbols", "Bearer !@#$%^&*()"],
    ["key with a wrong checksum", `Bearer ${badChecksum}`],
    ["well-formed unknown key", `Bearer ${wellFormedUnknown}`],
    ["real key plus a character", `Bearer ${key}x`],
    ["real key twice", `Bearer ${key} ${key}`],
    ["real key with trailing junk", `Bearer ${key} junk`],
    ["tampered session", `Bearer ${s.session.slice(0, -1)}${s.session.endsWith("A") ? "B" : "A"}`],
    ["session prefix", `Bearer ${s.session.slice(0, 20)}`],
    ["very long token", `Bearer ${"x".repeat(8_000)}`],
    ["very long key-looking token", `Bearer rmkt_${"x".repeat(8_000)}`],
    ["non-ASCII token", `Bearer ${encodeURIComponent("ключ")}`],
    ["revoked key", `Bearer ${revoked}`]
  ]
}

/** A key created and revoked for the test. */
const revokedKey = Effect.gen(function*() {
  const s = yield* Seed
  const created = yield* call("POST", "/my/keys", { token: s.session })
  expect(created.status).toBe(201)
  const revoked = yield* call("DELETE", `/my/keys/${created.json.id}`, { token: s.session })
  expect(revoked.status).toBe(204)
  return created.json.key as string
})

const request = (endpoint: Managed, authorization: string | undefined) =>
  Effect.gen(function*() {
    const s = yield* Seed
    const headers: Record<string, string> = { accept: "application/json" }
    if (authorization !== undefined) headers["authorization"] = authorization
    if (endpoint.body !== undefined) headers["content-type"] = "application/json"
    return yield* raw({
      method: endpoint.method,
      path: endpoint.path(s),
      headers,
      ...(endpoint.body === undefined ? {} : { body: JSON.stringify(endpoint.body) })
    })
  })

describe("bad credentials", () => {
  layer(SeededApp({ email: "credentials@example.com" }))((it) => {
    for (const endpoint of MANAGEMENT) {
      it.effect(`${endpoint.label}: every bad credential is 401 with WWW-Authenticate: Bearer, and changes nothing`, () =>
        Effect.gen(function*() {
          const s = yield* Seed
          const revoked = yield* revokedKey
          yield* unchanged(Effect.gen(function*() {
            for (const [label, authorization] of badCredentials(s, revoked)) {
              const reply = yield* request(endpoint, authorization)
              const problem = expectProblem(reply, 401, "unauthenticated")
              expect(reply.headers["www-authenticate"], label).toMatch(/^Bearer/)
              // The refusal never repeats the credential it refused.
              if (authorization !== undefined && authorization.length > 12) {
                expect(reply.text, label).not.toContain(authorization.replace(/^\w+ /, ""))
              }
              expect(problem.code, label).toBe("unauthenticated")
            }
          }))
        }))
    }

    it.effect("POST /repos with a present but bad credential is 401, never an anonymous listing", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        const revoked = yield* revokedKey
        yield* unchanged(Effect.gen(function*() {
          // "no header" and "empty" are anonymous requests, allowed on this endpoint; the rest must be refused.
          for (const [label, authorization] of badCredentials(s, revoked).slice(2)) {
            const reply = yield* raw({
              method: "POST",
              path: "/repos",
              headers: { authorization: authorization!, "content-type": "application/json" },
              body: JSON.stringify({ host_url: "https://github.com/octo-org/gadget", price_usd: "5.00", wallet_base: BASE_WALLET_2 })
            })
            expect(reply.status, `${label}: ${reply.text}`).toBe(401)
            expectProblem(reply, 401, "unauthenticated")
          }
        }))
      }))

    it.effect("an API key cannot create keys: 403 forbidden, no key made", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        yield* unchanged(Effect.gen(function*() {
          expectProblem(yield* call("POST", "/my/keys", { token: s.keys[0]! }), 403, "forbidden")
        }))
      }))

    it.effect("a valid bearer credential cannot start the code-host connection: GET is 405, POST needs the browser session", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        for (const token of [s.session, s.keys[0]!]) {
          expectProblem(yield* call("GET", "/auth/host/start", { token }), 405, "method_not_allowed")
          expectProblem(yield* call("POST", "/auth/host/start", { token }), 401, "unauthenticated")
        }
      }))

    it.effect("credentials in the query string or a cookie of the wrong name are not accepted", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        yield* unchanged(Effect.gen(function*() {
          for (const path of [`/my/account?access_token=${s.keys[0]}`, `/my/account?token=${s.session}`]) {
            expectProblem(yield* raw({ method: "GET", path }), 401, "unauthenticated")
          }
          expectProblem(yield* raw({ method: "GET", path: "/my/account", headers: { cookie: `token=${s.keys[0]}` } }), 401)
          expectProblem(yield* raw({ method: "GET", path: "/my/account", headers: { "x-api-key": s.keys[0]! } }), 401)
        }))
      }))

    it.effect("the scheme name is case-insensitive (RFC 9110), and a good credential still works after all the refusals", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        for (const scheme of ["Bearer", "bearer", "BEARER"]) {
          const reply = yield* raw({ method: "GET", path: "/my/account", headers: { authorization: `${scheme} ${s.keys[1]}` } })
          expect(reply.status, `${scheme}: ${reply.text}`).toBe(200)
        }
        expectNoServerError(yield* call("GET", "/my/stores", { token: s.keys[2]! }))
      }))
  })
})

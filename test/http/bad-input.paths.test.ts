import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call } from "../support/app.js"
import { expectNoServerError, expectProblem, raw, Seed, SeededApp, unchanged } from "../support/badInput.js"

/**
 * Odd paths, sent verbatim (no client-side normalisation of `..` or escapes): public pages, management paths and
 * checkouts answer 404 or 400 problem+json, never 5xx, and a path that only resembles the seeded listing never
 * touches it.
 */

const long = (n: number, c = "a") => c.repeat(n)

const PUBLIC_PATHS = [
  "/r/..",
  "/r/.",
  "/r/%2e%2e",
  "/r/%2E%2E/%2E%2E",
  "/r/..%2f..%2fmy%2faccount",
  "/r/%00",
  "/r/a%00b",
  "/r/%ff",
  "/r/%",
  "/r/%zz",
  "/r/%20",
  "/r/-",
  "/r/a..b",
  "/r/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
  "/r/%E2%98%83",
  "/r/%F0%9F%98%80",
  "/r/%ED%A0%80", // an encoded lone surrogate: not valid UTF-8
  `/r/${long(40)}`,
  `/r/${long(101)}`,
  `/r/${long(5_000)}`,
  "/r/nobody-here",
  "/r/octo-org/..",
  "/r/octo-org/.",
  "/r/octo-org/%2e%2e",
  "/r/octo-org/%00",
  "/r/octo-org/widget%00",
  "/r/octo-org/widget%2F..",
  "/r/octo-org/widget/..%2f..%2fmy%2faccount",
  "/r/octo-org/widget.git",
  "/r/octo-org/widget/extra",
  "/r/octo-org/%E2%98%83",
  `/r/octo-org/${long(101)}`,
  `/r/octo-org/${long(300)}`,
  `/r/${long(5_000)}/${long(5_000)}`,
  "/r//widget",
  "//r/octo-org/widget/x",
  "/checkout/%00",
  "/checkout/..",
  "/checkout/%2e%2e",
  `/checkout/${long(65, "c")}`,
  `/checkout/${long(5_000, "c")}`,
  "/checkout/chk_doesnotexist",
  "/checkout/chk_doesnotexist/test",
  "/checkout/%E2%98%83/test",
  "/checkout//test",
  "/checkout/x/test/extra",
  "/downloads/%00",
  `/downloads/${long(300, "d")}`
]

const UNKNOWN_ROUTES: ReadonlyArray<[string, string]> = [
  ["GET", "/nope"],
  ["GET", "/r"],
  ["GET", "/r/"],
  ["GET", "/my"],
  ["GET", "/admin"],
  ["GET", "/.env"],
  ["GET", "/%2e%2e/%2e%2e/etc/passwd"],
  ["GET", "/my/keys/x/y"],
  ["POST", "/nope"],
  ["DELETE", "/nope"]
]

/** Known paths with a method they do not serve: 404 (or 405) problem+json. */
const WRONG_METHODS: ReadonlyArray<[string, string]> = [
  ["PUT", "/repos"],
  ["GET", "/repos"],
  ["DELETE", "/my/account"],
  ["PUT", "/my/keys"],
  ["POST", "/r/octo-org"],
  ["PATCH", "/r/octo-org/widget"],
  ["DELETE", "/r/octo-org/widget"],
  ["POST", "/checkout/chk_x"],
  ["GET", "/auth/magic-link"]
]

describe("odd paths", () => {
  layer(SeededApp({ email: "paths@example.com" }))((it) => {
    it.effect("public pages and checkouts: 404 or 400 problem+json, never 5xx", () =>
      unchanged(Effect.gen(function*() {
        for (const path of PUBLIC_PATHS) {
          const reply = yield* raw({ method: "GET", path, headers: { accept: "application/json" } })
          expect([400, 404], `${path}: ${reply.status} ${reply.text.slice(0, 200)}`).toContain(reply.status)
          expectProblem(reply)
        }
      })))

    it.effect("the same paths with a HEAD request never 5xx", () =>
      Effect.gen(function*() {
        for (const path of PUBLIC_PATHS) {
          const reply = yield* raw({ method: "HEAD", path })
          expect(reply.status, path).toBeLessThan(500)
        }
      }))

    it.effect("management paths that only resemble the seeded listing or key never touch them", () =>
      unchanged(Effect.gen(function*() {
        const s = yield* Seed
        const auth = { authorization: `Bearer ${s.keys[0]}`, "content-type": "application/json" }
        const body = JSON.stringify({ price_usd: "0.01" })
        const paths = [
          `/repos/${s.owner}/${s.repo}%00`,
          `/repos/${s.owner}%00/${s.repo}`,
          `/repos/${s.owner}/${s.repo}.git`,
          `/repos/${s.owner}/${s.repo}/extra`,
          `/repos/${s.owner}/${s.repo}%2F..`,
          `/repos/${s.owner}/%2e%2e`,
          `/repos/../${s.repo}`,
          `/repos/%2e%2e/${s.repo}`,
          "/repos/..%2f..%2fmy%2faccount/x",
          "/repos/%00/%00",
          `/repos/${long(150)}/${s.repo}`,
          `/repos/${s.owner}/${long(300)}`,
          `/repos/${s.owner}/%E2%98%83`,
          `/repos/${s.owner}`,
          "/repos//"
        ]
        for (const path of paths) {
          for (const method of ["PATCH", "DELETE"]) {
            const reply = yield* raw({ method, path, headers: auth, ...(method === "PATCH" ? { body } : {}) })
            // `/repos//` is `/repos` to the router (duplicate and trailing slashes ignored): 405, as PATCH /repos.
            expect([400, 403, 404, 405], `${method} ${path}: ${reply.status} ${reply.text.slice(0, 200)}`).toContain(reply.status)
            expectProblem(reply)
          }
        }
        for (const path of [`/my/keys/${s.spareKeyId}%00`, `/my/keys/${s.spareKeyId}x`, "/my/keys/%00", "/my/keys/..", "/my/keys/%2e%2e", `/my/keys/${long(65, "k")}`, `/my/keys/${s.spareKeyId}/extra`, "/my/keys/%E2%98%83"]) {
          const reply = yield* raw({ method: "DELETE", path, headers: { authorization: `Bearer ${s.keys[0]}` } })
          expect([400, 404], `DELETE ${path}: ${reply.status} ${reply.text.slice(0, 200)}`).toContain(reply.status)
          expectProblem(reply)
        }
      })))

    it.effect("unknown routes are 404 problem+json", () =>
      unchanged(Effect.gen(function*() {
        for (const [method, path] of UNKNOWN_ROUTES) {
          const reply = yield* raw({
            method,
            path,
            headers: { accept: "application/json", "content-type": "application/json" },
            ...(method === "GET" ? {} : { body: "{}" })
          })
          expectProblem(reply, 404, "not_found")
        }
      })))

    it.effect("known paths with a method they do not serve are 404 or 405 problem+json", () =>
      unchanged(Effect.gen(function*() {
        for (const [method, path] of WRONG_METHODS) {
          const reply = yield* raw({ method, path, headers: { "content-type": "application/json" }, ...(method === "GET" ? {} : { body: "{}" }) })
          expectProblem(reply, [404, 405])
        }
      })))

    it.effect("query strings with junk do not break pages", () =>
      unchanged(Effect.gen(function*() {
        const s = yield* Seed
        for (const query of ["?%", "?%00=%00", "?a=1&a=2&a=3", `?${long(4_000, "q")}`, "?__proto__[x]=1", "?constructor=1"]) {
          expectNoServerError(yield* raw({ method: "GET", path: `/r/${s.owner}${query}`, headers: { accept: "application/json" } }), query)
          expectNoServerError(yield* raw({ method: "GET", path: `/r/${s.owner}/${s.repo}${query}`, headers: { accept: "application/json" } }), query)
          expectNoServerError(yield* raw({ method: "GET", path: `/my/stores${query}`, headers: { authorization: `Bearer ${s.keys[1]}` } }), query)
        }
      })))

    it.effect("the code-host callback with junk parameters is 400 (or the documented 503 not_configured), never another 5xx", () =>
      unchanged(Effect.gen(function*() {
        for (const query of ["", "?code=x&state=y", "?code=a&code=b", "?state=%00", "?error=access_denied", `?state=${long(5_000, "s")}`, "?code=%ff&state=%", "?unknown=1"]) {
          const reply = yield* raw({ method: "GET", path: `/auth/host/callback${query}` })
          if (reply.status >= 500) expectProblem(reply, 503, "not_configured")
          else expectProblem(reply, [400, 401, 403, 404, 410])
        }
      })))

    it.effect("names match case-insensitively, and odd case never reaches another listing", () =>
      Effect.gen(function*() {
        const s = yield* Seed
        for (const path of ["/r/octo-org/widget", "/r/OCTO-ORG/WIDGET", "/r/Octo-Org/Widget"]) {
          const reply = yield* call("GET", path, { headers: { accept: "application/json" } })
          expect(reply.status, path).toBe(200)
          expect(reply.json.repo).toBe(`${s.owner}/${s.repo}`)
        }
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, TestApp } from "../support/app.js"
import { expectProblem } from "../support/flows.js"

/**
 * Issue 12, finding 13(d): a known path asked with a method it does not take is 405 problem+json with an
 * `Allow` header naming the methods it does take (RFC 9110 §15.5.6); an unknown path stays 404.
 */
const allowOf = (headers: Readonly<Record<string, string>>) =>
  (headers["allow"] ?? "").split(",").map((m) => m.trim()).filter((m) => m !== "").sort()

describe("wrong method on a known path", () => {
  layer(TestApp())((it) => {
    it.effect("PUT /repos, DELETE /r/x/y and POST /checkout/<id> are 405 with Allow", () =>
      Effect.gen(function*() {
        const cases: Array<[method: "GET" | "PUT" | "DELETE" | "POST" | "PATCH", path: string, allow: Array<string>]> = [
          ["PUT", "/repos", ["POST"]],
          ["DELETE", "/r/x/y", ["GET", "HEAD"]],
          ["POST", "/checkout/chk_abc", ["GET", "HEAD"]],
          ["POST", "/checkout/chk_abc/test", ["GET", "HEAD"]],
          ["PUT", "/repos/octo-org/widget", ["DELETE", "PATCH"]],
          ["DELETE", "/my/account", ["GET", "HEAD", "PATCH"]],
          ["GET", "/auth/magic-link", ["POST"]]
        ]
        for (const [method, path, allow] of cases) {
          const reply = yield* call(method, path, method === "GET" || method === "DELETE" ? {} : { body: {} })
          expectProblem(reply, 405, "method_not_allowed")
          expect({ path, allow: allowOf(reply.headers) }).toEqual({ path, allow })
        }
      }))

    it.effect("an unknown path is still 404, whatever the method", () =>
      Effect.gen(function*() {
        for (const [method, path] of [["GET", "/nowhere"], ["PUT", "/repos/a/b/c"], ["POST", "/r"], ["DELETE", "/checkout"]] as const) {
          const reply = yield* call(method, path)
          expectProblem(reply, 404, "not_found")
          expect(reply.headers["allow"]).toBeUndefined()
        }
      }))
  })
})

/*
 * LOG_LEVEL, as an operator sets it for `npm start` (one real server process on the embedded database): the
 * access log is written at INFO, so WARN leaves it out while warnings (the development mailer's sign-in link
 * among them) still show; an unknown level stops start-up naming the setting.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { closedPort } from "../faults/fakeFacilitator.js"
import { request, signInFromLog, startServer } from "./serverProcess.js"

const serverWith = (settings: Record<string, string>) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-log-level-"))),
      (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
    )
    const port = yield* Effect.promise(() => closedPort())
    return yield* startServer({ TMPDIR: dir, DATA_DIR: join(dir, "data"), BASE_URL: `http://127.0.0.1:${port}`, ...settings }, port, 120_000)
  })

/** Two requests and a sign-in, then what the process wrote. */
const logOf = (settings: Record<string, string>) =>
  Effect.gen(function*() {
    const server = yield* serverWith(settings)
    for (let i = 0; i < 2; i++) expect((yield* request(server.origin, "GET", "/healthz")).status).toBe(200)
    const session = yield* signInFromLog(server, "operator@example.com")
    expect((yield* request(server.origin, "GET", "/my/account", { token: session })).status).toBe(200)
    return server.output()
  })

describe("LOG_LEVEL", () => {
  it.scopedLive("unset, every request has its access line at INFO", () =>
    Effect.gen(function*() {
      const log = yield* logOf({})
      expect(log).toMatch(/INFO .*GET \/healthz 200/)
      expect(log).toMatch(/INFO .*GET \/my\/account 200/)
    }), 120_000)

  it.scopedLive("WARN leaves out the access log and every INFO line; the development mailer's warning still shows", () =>
    Effect.gen(function*() {
      const log = yield* logOf({ LOG_LEVEL: "warn" })
      expect(log).not.toContain("/healthz")
      expect(log).not.toContain("GET /my/account")
      expect(log).not.toMatch(/\bINFO\b/)
      expect(log).toMatch(/WARN .*development mailer/)
    }), 120_000)

  it.scopedLive("an unknown level stops start-up with a message naming LOG_LEVEL", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.exit(Effect.scoped(serverWith({ LOG_LEVEL: "verbose" })))
      expect(Exit.isFailure(failed)).toBe(true)
      const why = Exit.isFailure(failed) ? Cause.pretty(failed.cause) : ""
      expect(why).toContain("the server exited")
      expect(why).toContain("LOG_LEVEL=verbose: not one of")
    }), 120_000)
})

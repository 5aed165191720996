import { execFile } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bundleLikeTemplate, templateFunctions } from "../../scripts/lambda-build.js"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"

/*
 * docs/deploy-lambda.md's local recipe: `npm run build:lambda`, then `npm run lambda:invoke -- <function>
 * <event>` (scripts/lambda-invoke.mjs) with the settings in the environment. The built bundles here are the
 * template's (scripts/lambda-build.ts), into a folder of this file's own.
 */
const root = new URL("../../", import.meta.url).pathname
const built = mkdtempSync(join(tmpdir(), "repomarket-invoke-"))
const KEY = `k1:${Buffer.alloc(32, 9).toString("base64")}`

/**
 * Runs the recipe's command. The bound is far above a cold start's seconds and below the minute the handler's
 * pool and timers held the process before: a run that waits for them is killed and fails the test.
 */
const invoke = (fn: string, event: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((resolve) => {
    const child = execFile(process.execPath, ["scripts/lambda-invoke.mjs", fn, event, built], {
      cwd: root,
      timeout: 45_000,
      env: { PATH: process.env["PATH"] ?? "", ...env }
    }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr, killed: child.killed }))
  })

beforeAll(async () => {
  for (const { name, entry } of templateFunctions().filter((f) => f.name !== "StreamingFunction")) {
    await bundleLikeTemplate(entry, join(built, name))
  }
}, 5 * 60_000)

afterAll(() => rm(built, { recursive: true, force: true }))

it("a required setting missing: one line naming it on stderr, exit code 1, no stack trace", async () => {
  const run = await invoke("ApiFunction", "hosts/lambda/events/healthz.json", { BASE_URL: "https://market.example", SECRET_KEYS: KEY, SMTP_URL: "smtp://127.0.0.1:2525" })
  expect(run.killed).toBe(false)
  expect(run.code).toBe(1)
  expect(run.stdout).toBe("")
  const lines = run.stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^repomarket cannot start on AWS Lambda: .*DATABASE_URL is required on AWS Lambda/)
}, 60_000)

it("a function that is not built, or is not one the recipe can call, is one line saying what to do", async () => {
  const streaming = await invoke("StreamingFunction", "hosts/lambda/events/healthz.json", {})
  expect(streaming.code).toBe(1)
  expect(streaming.stderr.trim()).toMatch(/^usage: npm run lambda:invoke -- <ApiFunction\|DeliveryFunction> <event\.json>/)
  const missing = await new Promise<string>((resolve) =>
    execFile(process.execPath, ["scripts/lambda-invoke.mjs", "ApiFunction", "hosts/lambda/events/healthz.json", join(built, "nowhere")], { cwd: root }, (_e, _o, stderr) => resolve(stderr)))
  expect(missing.trim()).toMatch(/handler\.mjs is not built: run npm run build:lambda first$/)
}, 60_000)

await describePostgres("the local invoke recipe on PostgreSQL", () => {
  it("answers the sample events, then exits at once: 200 {\"ok\":true} from ApiFunction, a delivery run from DeliveryFunction", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      const env = { BASE_URL: "https://market.example", DATABASE_URL: url, SECRET_KEYS: KEY, SMTP_URL: "smtp://127.0.0.1:2525" }
      const api = yield* Effect.promise(() => invoke("ApiFunction", "hosts/lambda/events/healthz.json", env))
      expect(api.killed).toBe(false)
      expect(api.code).toBe(0)
      expect(api.stdout.trim().split("\n").at(-1)).toBe("200 {\"ok\":true}")
      const scheduled = yield* Effect.promise(() => invoke("DeliveryFunction", "hosts/lambda/events/scheduled.json", env))
      expect(scheduled.killed).toBe(false)
      expect(scheduled.code).toBe(0)
      expect(JSON.parse(scheduled.stdout.trim().split("\n").at(-1)!)).toMatchObject({ stoppedBecause: "idle", reconciled: { checked: 0 } })
    })))
  }, 120_000)
})

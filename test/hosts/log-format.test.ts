/*
 * `LOG_FORMAT=json` through real server processes (`tsx hosts/node/main.ts`): every line the server writes is
 * one JSON object naming its host and process, an answer's X-Request-Id finds exactly one access-log line, a
 * cluster's primary writes JSON too, and a format the server does not know stops start-up naming the setting.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { closedPort } from "../faults/fakeFacilitator.js"
import { eventually } from "../faults/support.js"
import { exitOf, getOnNewConnection, request, signInFromLog, startServer } from "../restart/serverProcess.js"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"

const SECRET_KEYS = `logs:${Buffer.alloc(32, 5).toString("base64")}`

interface JsonLine {
  readonly time: string
  readonly host: string
  readonly pid: number
  readonly level: string
  readonly message: string
  readonly role?: string
}

/** Every line of `output`, parsed; a line that is not a JSON object fails the test, naming it. */
const jsonLines = (output: string): Array<JsonLine> =>
  output.split("\n").filter((l) => l.trim() !== "").map((line) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      throw new Error(`not a JSON line: ${line}`)
    }
    expect(parsed, line).toMatchObject({ host: hostname(), pid: expect.any(Number), level: expect.any(String), message: expect.anything() })
    expect(new Date((parsed as JsonLine).time).toISOString()).toBe((parsed as JsonLine).time)
    return parsed as JsonLine
  })

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-logs-"))),
  (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
)

/** The lines of `output` that parse as JSON objects (a line still being written is left for the next look). */
const linesSoFar = (output: string): Array<JsonLine> =>
  output.split("\n").flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line)
      return typeof parsed === "object" && parsed !== null ? [parsed as JsonLine] : []
    } catch {
      return []
    }
  })

describe("LOG_FORMAT", () => {
  it.scopedLive("json: one object per line, with host and pid; a request id finds its access line", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const port = yield* Effect.promise(() => closedPort())
      const server = yield* startServer({ TMPDIR: dir, DATA_DIR: join(dir, "data"), SECRET_KEYS, LOG_FORMAT: "json" }, port, 120_000)
      const missing = yield* request(server.origin, "GET", "/no/such/page")
      expect(missing.status).toBe(404)
      const id = missing.headers.get("x-request-id")!
      // Sign-in by the development mailer's warning, read from the JSON log as a person would read it.
      expect((yield* signInFromLog(server, "logs@example.com")).length).toBeGreaterThan(10)
      // The access line is written once the answer has gone: wait for it, not for a time.
      yield* eventually("the 404's access line", () => linesSoFar(server.output()).some((l) => String(l.message).includes(id)), 60_000)
      const lines = jsonLines(server.output())
      expect(new Set(lines.map((l) => l.pid)).size).toBe(1)
      const access = lines.filter((l) => String(l.message).includes(id))
      expect(access.length).toBe(1)
      expect(access[0]!.level).toBe("INFO")
      expect(access[0]!.message).toMatch(new RegExp(`^GET /no/such/page 404 \\d+ms id=${id}$`))
      expect(lines.some((l) => l.level === "WARN" && String(l.message).includes("To: logs@example.com"))).toBe(true)
      yield* Effect.promise(() => server.stop())
      // The lines written while stopping are JSON too.
      expect(jsonLines(server.output()).some((l) => String(l.message).includes("Requests drained"))).toBe(true)
    }), 180_000)

  it.scopedLive("an unknown format stops start-up naming the setting", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const port = yield* Effect.promise(() => closedPort())
      const refused = yield* exitOf({ TMPDIR: dir, DATA_DIR: join(dir, "data"), PORT: String(port), LOG_FORMAT: "yaml" })
      expect(refused.code).toBe(1)
      expect(refused.output).toContain('LOG_FORMAT must be pretty or json (got "yaml")')
    }), 120_000)
})

await describePostgres("LOG_FORMAT=json with WORKERS=2", () => {
  it.scopedLive("the primary and each worker write JSON lines naming their own pid", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const databaseUrl = yield* postgresTestDatabaseUrl
      const port = yield* Effect.promise(() => closedPort())
      const server = yield* startServer({ TMPDIR: dir, DATA_DIR: join(dir, "data"), DATABASE_URL: databaseUrl, SECRET_KEYS, WORKERS: "2", LOG_FORMAT: "json" }, port, 180_000)
      // Each on a connection of its own: the primary hands connections to the workers in turn.
      for (let i = 0; i < 6; i++) expect(yield* Effect.promise(() => getOnNewConnection(`${server.origin}/healthz`))).toBe(200)
      // Each worker writes its access lines after answering, on its own time: wait until both have written one
      // (on a busy machine a worker's first line came after the last answer), not for a fixed time.
      const workerPidsSoFar = () => new Set(linesSoFar(server.output()).filter((l) => l.role === undefined && String(l.message).startsWith("GET /healthz")).map((l) => l.pid))
      yield* eventually("an access line from each of the 2 workers", () => workerPidsSoFar().size >= 2, 60_000)
      const lines = jsonLines(server.output())
      const primary = lines.filter((l) => l.role === "primary")
      expect(primary.map((l) => l.message)).toContain("starting 2 workers")
      const primaryPid = primary[0]!.pid
      expect(primary.every((l) => l.pid === primaryPid)).toBe(true)
      const workerPids = new Set(lines.filter((l) => l.role === undefined).map((l) => l.pid))
      expect(workerPids.size).toBe(2)
      expect(workerPids.has(primaryPid)).toBe(false)
      yield* Effect.promise(() => server.stop())
    }), 300_000)
})

/*
 * A production start of the Node host (`tsx hosts/node/main.ts` with NODE_ENV=production or an https BASE_URL)
 * without SECRET_KEYS, or without SMTP_URL unless SIGN_IN_LINKS_TO_LOG=1 says sign-in links may go to the
 * log, is refused: one line on stderr naming what is missing, a non-zero exit, and nothing made on disk (no
 * embedded database, no generated key under DATA_DIR).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { closedPort } from "../faults/fakeFacilitator.js"
import { request, signInFromLog, startServer } from "../restart/serverProcess.js"

const ROOT = join(import.meta.dirname, "../..")
const TSX = join(ROOT, "node_modules/.bin/tsx")
const SECRET_KEYS = `prod:${Buffer.alloc(32, 9).toString("base64")}`

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-production-"))),
  (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
)

/** Starts the server with only `env` (and PATH, HOME) and waits for it to exit: its code, stdout and stderr apart. */
const refusalOf = (env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child: ChildProcess = spawn(TSX, ["hosts/node/main.ts"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", BASE_RPC_URL: "off", SOLANA_RPC_URL: "off", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
      child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
      // A server that starts after all would listen forever: the test fails on its exit code.
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
  )

/** Asserts a refusal: non-zero exit, nothing on stdout, exactly one line on stderr (no stack), nothing under DATA_DIR. */
const expectRefused = (refused: { code: number | null; stdout: string; stderr: string }, dataDir: string) => {
  expect(refused.code, refused.stdout + refused.stderr).not.toBe(0)
  expect(refused.code).not.toBeNull()
  expect(refused.stdout).toBe("")
  const lines = refused.stderr.split("\n").filter((l) => l.trim() !== "")
  expect(lines, refused.stderr).toHaveLength(1)
  expect(lines[0]).not.toMatch(/\bat \S+ \(|Error:/)
  expect(existsSync(dataDir), "DATA_DIR was created").toBe(false)
  return lines[0]!
}

describe("a production start of the Node host", () => {
  it.scopedLive("NODE_ENV=production without SECRET_KEYS is refused in one line naming SECRET_KEYS", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dataDir = join(dir, "data")
      const port = yield* Effect.promise(() => closedPort())
      const line = expectRefused(
        yield* refusalOf({ TMPDIR: dir, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: "production", SMTP_URL: "smtp://mail.example:587" }),
        dataDir
      )
      expect(line).toContain("SECRET_KEYS")
      expect(line).toContain("NODE_ENV=production")
      expect(line).not.toContain("SMTP_URL")
    }), 120_000)

  it.scopedLive("an https BASE_URL with SECRET_KEYS but no SMTP_URL is refused naming SMTP_URL and SIGN_IN_LINKS_TO_LOG", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dataDir = join(dir, "data")
      const port = yield* Effect.promise(() => closedPort())
      const line = expectRefused(
        yield* refusalOf({ TMPDIR: dir, DATA_DIR: dataDir, PORT: String(port), BASE_URL: "https://repomarket.example", SECRET_KEYS }),
        dataDir
      )
      expect(line).toContain("SMTP_URL")
      expect(line).toContain("SIGN_IN_LINKS_TO_LOG=1")
      expect(line).toContain("BASE_URL is https")
      expect(line).not.toContain("SECRET_KEYS")
      // Both missing: one line naming both.
      const both = expectRefused(yield* refusalOf({ TMPDIR: dir, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: "production" }), dataDir)
      expect(both).toMatch(/SECRET_KEYS[\s\S]*SMTP_URL/)
      // A value of the opt-in that is neither yes nor no is not taken as either.
      const typo = expectRefused(
        yield* refusalOf({ TMPDIR: dir, DATA_DIR: dataDir, PORT: String(port), NODE_ENV: "production", SECRET_KEYS, SIGN_IN_LINKS_TO_LOG: "sure" }),
        dataDir
      )
      expect(typo).toContain("SIGN_IN_LINKS_TO_LOG")
    }), 180_000)

  it.scopedLive("with SECRET_KEYS and SIGN_IN_LINKS_TO_LOG=1 it starts, and the sign-in link is in the log", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const port = yield* Effect.promise(() => closedPort())
      const server = yield* startServer(
        { TMPDIR: dir, DATA_DIR: join(dir, "data"), NODE_ENV: "production", BASE_URL: "https://repomarket.example", SECRET_KEYS, SIGN_IN_LINKS_TO_LOG: "1" },
        port,
        120_000
      )
      expect((yield* request(server.origin, "GET", "/healthz")).status).toBe(200)
      expect((yield* signInFromLog(server, "production@example.com")).length).toBeGreaterThan(10)
      // The key came from SECRET_KEYS: no development key was generated.
      expect(server.output()).not.toContain("generated development key")
      yield* Effect.promise(() => server.stop())
    }), 180_000)
})

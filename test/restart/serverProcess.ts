/*
 * The real server (`tsx hosts/node/main.ts`) as a child process for restart tests. It runs in its own process
 * group: tsx starts the server in a grandchild, and a SIGKILL (which tsx cannot relay) must reach that one
 * too, exactly as a machine losing the process would. Its environment is built here from nothing but PATH and
 * HOME, so no setting of the test run (DATABASE_URL, SMTP_URL, GITHUB_TOKEN...) leaks into it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { Effect } from "effect"

const ROOT = join(import.meta.dirname, "../..")
const TSX = join(ROOT, "node_modules/.bin/tsx")

export interface ServerProcess {
  readonly child: ChildProcess
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** stdout and stderr so far. */
  readonly output: () => string
  /** Sends `signal` to the whole process group and waits until the group is gone. */
  readonly kill: (signal: "SIGKILL" | "SIGTERM", waitMs?: number) => Promise<void>
  /**
   * A clean stop: SIGTERM to the node process running main.ts (as a process manager signals its service),
   * then waits until the whole group is gone. Not to the group: tsx relays a SIGTERM it receives and, when the
   * server does not acknowledge it within 30 ms (a loaded machine), replaces it with a SIGKILL.
   */
  readonly stop: (waitMs?: number) => Promise<void>
  /** Whether any process of the group is still alive. */
  readonly alive: () => boolean
}

const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Pids of the process group, from /proc (Linux). */
const groupPids = (pgid: number): Array<number> =>
  readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      // Field 5 of /proc/<pid>/stat is the process group; the command name (field 2) may hold spaces.
      const stat = readFileSync(`/proc/${d}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(fields[2]) === pgid ? [Number(d)] : []
    } catch {
      return []
    }
  })

const cmdlineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")
  } catch {
    return ""
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Starts the server with `env` and waits until `GET /healthz` answers 200 (or the process exits, or
 * `startMs` pass: both fail with its output). Use inside a scope: the group is SIGKILLed on release if alive.
 * `nodeFlags` go to node before the entry point (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow).
 */
export const startServer = (env: Record<string, string>, port: number, startMs = 90_000, nodeFlags: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<ServerProcess> => {
      const child = spawn(TSX, [...nodeFlags, "hosts/node/main.ts"], {
        cwd: ROOT,
        // The chain readers are off unless the test points them at its own loopback RPC.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", PORT: String(port), BASE_RPC_URL: "off", SOLANA_RPC_URL: "off", ...env },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      let output = ""
      child.stdout!.on("data", (c) => (output += c))
      child.stderr!.on("data", (c) => (output += c))
      const pgid = child.pid!
      const gone = async (what: string, waitMs: number) => {
        const until = Date.now() + waitMs
        while (groupAlive(pgid) || (child.exitCode === null && child.signalCode === null)) {
          if (Date.now() > until) throw new Error(`process group ${pgid} still alive ${waitMs} ms after ${what}`)
          await sleep(25)
        }
      }
      const server: ServerProcess = {
        child,
        origin: `http://127.0.0.1:${port}`,
        output: () => output,
        alive: () => groupAlive(pgid),
        kill: async (signal, waitMs = 15_000) => {
          if (groupAlive(pgid)) process.kill(-pgid, signal)
          await gone(signal, waitMs)
        },
        stop: async (waitMs = 30_000) => {
          const main = groupPids(pgid).find((pid) => pid !== pgid && cmdlineOf(pid).includes("hosts/node/main.ts"))
          if (main === undefined) throw new Error(`no server process in group ${pgid}: ${groupPids(pgid).map(cmdlineOf).join(" | ")}`)
          process.kill(main, "SIGTERM")
          await gone("SIGTERM", waitMs)
        }
      }
      const until = Date.now() + startMs
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`)
        }
        const res = await fetch(`${server.origin}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null)
        if (res?.status === 200) return server
        if (Date.now() > until) {
          await server.kill("SIGKILL").catch(() => undefined)
          throw new Error(`the server was not ready within ${startMs} ms:\n${output}`)
        }
        await sleep(100)
      }
    }),
    (server) => Effect.promise(() => server.kill("SIGKILL").catch(() => undefined))
  )

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/** One request to the server, answered within 15 s. */
export const request = (
  origin: string,
  method: "GET" | "POST" | "DELETE" | "PATCH",
  path: string,
  options: { readonly token?: string; readonly body?: unknown; readonly headers?: Record<string, string> } = {}
) =>
  Effect.promise(async (): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
    if (options.body !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(new URL(path, origin), {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(15_000)
    })
    const text = await res.text()
    let json: unknown = undefined
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, headers: res.headers, text, json }
  })

/**
 * Signs in as `email` the way a person would without SMTP: ask for the link, read it from the server's log
 * (the development mailer writes it there), and post its token.
 */
export const signInFromLog = (server: ServerProcess, email: string) =>
  Effect.gen(function*() {
    const from = server.output().length
    const asked = yield* request(server.origin, "POST", "/auth/magic-link", { body: { email } })
    if (asked.status !== 202) throw new Error(`magic link: ${asked.status} ${asked.text}`)
    const token = yield* Effect.promise(async () => {
      const until = Date.now() + 10_000
      for (;;) {
        const logged = server.output().slice(from)
        const match = logged.includes(`To: ${email}`) ? /\/auth\/verify\?token=([A-Za-z0-9_-]+)/.exec(logged) : null
        if (match) return match[1]!
        if (Date.now() > until) throw new Error(`no sign-in link for ${email} in the log:\n${logged}`)
        await sleep(50)
      }
    })
    const verified = yield* request(server.origin, "POST", "/auth/verify", { body: { token } })
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`)
    return verified.json.access_token as string
  })

/** Starts the server with `env` and waits for it to exit (a server that must refuse to start): its exit code and output. */
export const exitOf = (env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child: ChildProcess = spawn(TSX, ["hosts/node/main.ts"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", BASE_RPC_URL: "off", SOLANA_RPC_URL: "off", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout!.on("data", (c: Buffer) => (output += c.toString("utf8")))
      child.stderr!.on("data", (c: Buffer) => (output += c.toString("utf8")))
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      child.on("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, output })
      })
    })
  )

/** A GET on a fresh connection (so that a cluster's primary hands each to the next worker). */
export const getOnNewConnection = (url: string) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { connection: "close" } }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end()
  })

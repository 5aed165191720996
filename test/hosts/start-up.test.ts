/*
 * First contact with `npm start`, through real child processes (`npm start`, or `node --import tsx
 * hosts/node/main.ts`): once the server answers it prints where it is and what it runs on (a block, or one JSON
 * line with LOG_FORMAT=json), and only then; the asset build before it prints nothing when nothing changed. A
 * wrong setting stops start-up in a few seconds with one line on stderr naming the setting, what is wrong and
 * what is accepted — printed once, no stack, no secret, exit code not 0, and (for what needs no network) before
 * anything is made on disk. Without SMTP the sign-in page and POST /auth/magic-link say the link went to the
 * server log (and the answer holds no link); pages name a favicon, which is served.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import { closedPort } from "../faults/fakeFacilitator.js"
import { getOnNewConnection } from "../restart/serverProcess.js"
import { describePostgres, postgresTestDatabaseUrl, TEST_DATABASE_URL } from "../support/postgres.js"

const ROOT = join(import.meta.dirname, "../..")
const SECRET_KEYS = `start:${Buffer.alloc(32, 7).toString("base64")}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Only PATH and HOME from this run (no DATABASE_URL, SMTP_URL... leaks in); chain readers off. */
const envOf = (env: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  BASE_RPC_URL: "off",
  SOLANA_RPC_URL: "off",
  ...env
})

interface Child {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the exit code once the process is gone. */
  readonly exited: Promise<number | null>
  /** SIGKILL to the whole process group (npm, sh, tsx and node alike). */
  readonly kill: () => Promise<void>
}

/** `npm start`, or the entry point run by node with tsx, in its own process group. */
const launch = (how: "npm start" | "node", env: Record<string, string>): Child => {
  const child = how === "npm start"
    ? spawn("npm", ["start"], { cwd: ROOT, env: envOf(env), stdio: ["ignore", "pipe", "pipe"], detached: true })
    : spawn(process.execPath, ["--import", "tsx", "hosts/node/main.ts"], { cwd: ROOT, env: envOf(env), stdio: ["ignore", "pipe", "pipe"], detached: true })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    kill: async () => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // Already gone.
      }
      await Promise.race([exited, sleep(5_000)])
    }
  }
}

/** Waits until `found` holds of the output (or the process exits, or `ms` pass: both fail with the output). */
const waitFor = async (server: Child, found: () => boolean, ms: number) => {
  const until = Date.now() + ms
  while (!found()) {
    if (server.child.exitCode !== null) throw new Error(`exited (${server.child.exitCode}):\n${server.stdout()}\n${server.stderr()}`)
    if (Date.now() > until) throw new Error(`not within ${ms} ms:\n${server.stdout()}\n${server.stderr()}`)
    await sleep(50)
  }
}

const HEADLINE = /^repomarket is answering on (\S+)/m

/** Runs the server with `env` until it exits (at most a minute): its exit code, output and how long it took. */
const refusal = async (env: Record<string, string>, how: "npm start" | "node" = "node") => {
  const started = Date.now()
  const server = launch(how, env)
  const timer = setTimeout(() => void server.kill(), 60_000)
  const code = await server.exited
  clearTimeout(timer)
  return { code, stdout: server.stdout(), stderr: server.stderr(), ms: Date.now() - started }
}

/** One line on stderr and nothing else, no stack, a failing exit code; nothing under `dataDir` if given. */
const oneLine = (refused: Awaited<ReturnType<typeof refusal>>, dataDir?: string): string => {
  const all = `${refused.stdout}${refused.stderr}`
  expect(refused.code, all).not.toBe(0)
  expect(refused.code, all).not.toBeNull()
  expect(refused.stdout).toBe("")
  const lines = refused.stderr.split("\n").filter((l) => l.trim() !== "")
  expect(lines, refused.stderr).toHaveLength(1)
  expect(lines[0]).not.toMatch(/\bat \S+ \(|Error\b|ERROR/)
  if (dataDir !== undefined) expect(existsSync(dataDir), "DATA_DIR was created: something started").toBe(false)
  return lines[0]!
}

const tempDirs: Array<string> = []
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "repomarket-start-"))
  tempDirs.push(dir)
  return dir
}
afterAll(async () => {
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })))
})

describe("npm start with no settings", () => {
  let server: Child
  let origin: string
  let dataDir: string
  let port: number

  beforeAll(async () => {
    dataDir = join(await tempDir(), "data")
    port = await closedPort()
    server = launch("npm start", { PORT: String(port), DATA_DIR: dataDir, SECRET_KEYS })
    await waitFor(server, () => HEADLINE.test(server.stdout()), 180_000)
    origin = `http://127.0.0.1:${port}`
  }, 200_000)
  afterAll(() => server?.kill())

  it("prints a banner once the server answers: its URL, the database, code host, mail, payments, workers and metrics", async () => {
    // The moment the headline is out, the URL it names answers.
    const url = HEADLINE.exec(server.stdout())![1]!
    expect(url).toBe(`http://localhost:${port}`)
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    const banner = server.stdout().slice(server.stdout().search(HEADLINE)).split("\n").slice(0, 7).join("\n")
    expect(banner).toBe([
      `repomarket is answering on http://localhost:${port}`,
      `  database   embedded PGlite in ${join(dataDir, "pg")}`,
      "  code host  https://api.github.com, anonymous (60 requests an hour; GITHUB_TOKEN raises it)",
      "  mail       none: sign-in links are written to this log (SMTP_URL sends them)",
      "  payments   test twin only (X402_FACILITATOR_URL turns on live payments)",
      "  workers    1",
      "  metrics    off (METRICS_PORT turns them on)"
    ].join("\n"))
    // Printed once, and the asset build before it printed nothing (its sources did not change).
    expect(server.stdout().match(/repomarket is answering/g)).toHaveLength(1)
    expect(server.stdout()).not.toMatch(/KB gzipped/)
    expect(server.stdout() + server.stderr()).not.toContain(SECRET_KEYS.slice(6))
  })

  it("POST /auth/magic-link says the link went to the server log, and holds no link or token", async () => {
    const from = server.stdout().length
    const res = await fetch(`${origin}/auth/magic-link`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "first@example.com" })
    })
    const text = await res.text()
    expect(res.status).toBe(202)
    expect(JSON.parse(text)).toEqual({ sent: true, delivery: "log" })
    // The link is in the log (where the answer says), never in the answer.
    await waitFor(server, () => server.stdout().slice(from).includes("To: first@example.com"), 10_000)
    const token = /\/auth\/verify\?token=([A-Za-z0-9_-]+)/.exec(server.stdout().slice(from))![1]!
    expect(text).not.toContain(token)
    expect(text).not.toContain("/auth/verify")
  })

  it("the sign-in page says the link is written to the server log, not mailed", async () => {
    const form = await (await fetch(`${origin}/signin`, { headers: { accept: "text/html" } })).text()
    expect(form).toContain("writes the sign-in link to its own log")
    const res = await fetch(`${origin}/signin`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
      body: "email=page%40example.com"
    })
    const page = await res.text()
    expect(res.status).toBe(200)
    expect(page).toContain("<h1>Sign-in link written to the server log</h1>")
    expect(page).not.toContain("Check your mail")
    expect(page).not.toMatch(/token=/)
  })

  it("serves a favicon, which every page names", async () => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await fetch(`${origin}${path}`)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/)
      expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    }
    for (const path of ["/", "/signin", "/docs"]) {
      const page = await (await fetch(`${origin}${path}`, { headers: { accept: "text/html" } })).text()
      expect(page, path).toContain(`<link rel="icon" href="/favicon.svg" type="image/svg+xml">`)
    }
    expect(server.stdout()).not.toMatch(/GET \/favicon\.\w+ 404/)
  })
})

describe("the banner with LOG_FORMAT=json", () => {
  it("is one JSON line with the same facts, and no secret", async () => {
    const dataDir = join(await tempDir(), "data")
    const [port, metricsPort, smtpPort] = [await closedPort(), await closedPort(), await closedPort()]
    const token = `ghp_${randomBytes(12).toString("hex")}`
    const smtpPassword = `pw-${randomBytes(6).toString("hex")}`
    const server = launch("node", {
      PORT: String(port),
      DATA_DIR: dataDir,
      SECRET_KEYS,
      LOG_FORMAT: "json",
      GITHUB_TOKEN: token,
      SMTP_URL: `smtp://mailer:${smtpPassword}@127.0.0.1:${smtpPort}`,
      X402_FACILITATOR_URL: "https://facilitator.example/x402",
      METRICS_PORT: String(metricsPort),
      BASE_URL: "http://market.localhost:8080"
    })
    try {
      await waitFor(server, () => server.stdout().includes("repomarket is answering"), 180_000)
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      const lines = server.stdout().split("\n").filter((l) => l.includes("repomarket is answering"))
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0]!)).toEqual({
        time: expect.any(String),
        host: expect.any(String),
        pid: expect.any(Number),
        level: "INFO",
        message: `repomarket is answering on http://market.localhost:8080 (port ${port})`,
        url: "http://market.localhost:8080",
        port,
        database: { engine: "pglite", path: join(dataDir, "pg") },
        code_host: { api_url: "https://api.github.com", auth: "token" },
        mail: { via: "smtp", host: `127.0.0.1:${smtpPort}` },
        payments: { live: true, facilitator: "facilitator.example", networks: ["base", "solana"] },
        workers: 1,
        metrics: `http://127.0.0.1:${metricsPort}/metrics`
      })
      expect(server.stdout() + server.stderr()).not.toContain(token)
      expect(server.stdout() + server.stderr()).not.toContain(smtpPassword)
    } finally {
      await server.kill()
    }
  }, 200_000)
})

describe("settings refused before anything starts", () => {
  it("PORT=abc: one line naming PORT and what it takes", async () => {
    const dataDir = join(await tempDir(), "data")
    const refused = await refusal({ PORT: "abc", DATA_DIR: dataDir })
    expect(oneLine(refused, dataDir)).toBe("PORT=abc: not a port number (1–65535)")
    expect(refused.ms).toBeLessThan(10_000)
  }, 70_000)

  it("LOG_LEVEL=verbose: one line naming LOG_LEVEL and every level it takes", async () => {
    const dataDir = join(await tempDir(), "data")
    const refused = await refusal({ LOG_LEVEL: "verbose", PORT: String(await closedPort()), DATA_DIR: dataDir })
    expect(oneLine(refused, dataDir)).toBe("LOG_LEVEL=verbose: not one of all, trace, debug, info, warn, error, fatal, off (any case)")
    expect(refused.ms).toBeLessThan(10_000)
  }, 70_000)

  it("DATABASE_URL=mysql://…: only PostgreSQL URLs, the password never shown", async () => {
    const dataDir = join(await tempDir(), "data")
    const refused = await refusal({ DATABASE_URL: "mysql://root:hunter2-secret@foo/shop", PORT: String(await closedPort()), DATA_DIR: dataDir })
    const line = oneLine(refused, dataDir)
    expect(line).toMatch(/^DATABASE_URL: only postgres:\/\/ or postgresql:\/\/ URLs/)
    expect(line).not.toContain("hunter2")
    expect(refused.ms).toBeLessThan(10_000)
  }, 70_000)

  it("a port in use: one line saying PORT <n> is in use", async () => {
    const dataDir = join(await tempDir(), "data")
    const taken: Server = await new Promise((resolve) => {
      const s = createServer()
      s.listen(0, () => resolve(s))
    })
    const port = (taken.address() as { port: number }).port
    try {
      const refused = await refusal({ PORT: String(port), DATA_DIR: dataDir })
      expect(oneLine(refused, dataDir)).toMatch(new RegExp(`^PORT ${port} is in use`))
      expect(refused.ms).toBeLessThan(10_000)
    } finally {
      await new Promise((r) => taken.close(r))
    }
  }, 70_000)

  it("a PostgreSQL that refuses connections: one line naming DATABASE_URL and host:port, no password", async () => {
    const port = await closedPort()
    const refused = await refusal({
      DATABASE_URL: `postgres://app:never-shown-pw@127.0.0.1:${port}/shop`,
      PORT: String(await closedPort()),
      SECRET_KEYS
    })
    expect(oneLine(refused)).toBe(`DATABASE_URL: connection refused on 127.0.0.1:${port}: no PostgreSQL listens there`)
  }, 70_000)
})

/**
 * What a person sees after `npm start` refuses: npm's own headers on stdout ("> repomarket@… start" and the
 * command), then the one line on stderr. Returns that line.
 */
const oneLineThroughNpm = (refused: Awaited<ReturnType<typeof refusal>>, dataDir?: string): string => {
  const npmOwn = refused.stdout.split("\n").filter((l) => l.trim() !== "" && !/^> /.test(l))
  expect(npmOwn, refused.stdout).toEqual([])
  return oneLine({ ...refused, stdout: "" }, dataDir)
}

describe("the same refusals through npm start itself, as a newcomer types it", () => {
  it("PORT=abc", async () => {
    const dataDir = join(await tempDir(), "data")
    const refused = await refusal({ PORT: "abc", DATA_DIR: dataDir }, "npm start")
    expect(oneLineThroughNpm(refused, dataDir)).toBe("PORT=abc: not a port number (1–65535)")
  }, 70_000)

  it("a port in use", async () => {
    const dataDir = join(await tempDir(), "data")
    const taken: Server = await new Promise((resolve) => {
      const s = createServer()
      s.listen(0, () => resolve(s))
    })
    const port = (taken.address() as { port: number }).port
    try {
      const refused = await refusal({ PORT: String(port), DATA_DIR: dataDir }, "npm start")
      expect(oneLineThroughNpm(refused, dataDir)).toMatch(new RegExp(`^PORT ${port} is in use`))
    } finally {
      await new Promise((r) => taken.close(r))
    }
  }, 70_000)

  it("a production start without SECRET_KEYS", async () => {
    const dataDir = join(await tempDir(), "data")
    const refused = await refusal({ NODE_ENV: "production", PORT: String(await closedPort()), DATA_DIR: dataDir, SMTP_URL: "smtp://127.0.0.1:2525" }, "npm start")
    expect(oneLineThroughNpm(refused, dataDir)).toMatch(/SECRET_KEYS/)
  }, 70_000)
})

await describePostgres("npm start on PostgreSQL", () => {
  it("a database that does not exist: one line naming DATABASE_URL, the database and host:port, no password", async () => {
    const name = `repomarket_missing_${randomBytes(5).toString("hex")}`
    const url = new URL(TEST_DATABASE_URL)
    url.pathname = `/${name}`
    // With no password of its own (trust), one that must not show; the server does not ask for it.
    if (url.password === "") url.password = "never-shown-pw"
    const refused = await refusal({ DATABASE_URL: url.toString(), PORT: String(await closedPort()), SECRET_KEYS }, "npm start")
    const line = oneLineThroughNpm(refused)
    expect(line).toMatch(new RegExp(`^DATABASE_URL: database "${name}" does not exist on ${url.hostname}:${url.port || 5432}`))
    expect(line).not.toContain(decodeURIComponent(url.password))
  }, 70_000)

  it("WORKERS=2: the primary prints the banner once (JSON), naming PostgreSQL without its password", async () => {
    const scope = Effect.runSync(Scope.make())
    const port = await closedPort()
    const server = launch("node", {
      DATABASE_URL: await Effect.runPromise(Scope.extend(postgresTestDatabaseUrl, scope)),
      WORKERS: "2",
      PORT: String(port),
      SECRET_KEYS,
      LOG_FORMAT: "json"
    })
    try {
      await waitFor(server, () => server.stdout().includes("repomarket is answering"), 240_000)
      // Both workers answer (each would have printed its own banner): requests on new connections reach two pids.
      const pids = () =>
        new Set(server.stdout().split("\n").flatMap((l) => (l.includes("GET /healthz 200") ? [JSON.parse(l).pid as number] : [])))
      await waitFor(server, () => {
        void getOnNewConnection(`http://127.0.0.1:${port}/healthz`).catch(() => 0)
        return pids().size === 2
      }, 240_000)
      await sleep(500)
      const banners = server.stdout().split("\n").filter((l) => l.includes("repomarket is answering"))
      expect(banners).toHaveLength(1)
      const url = new URL(TEST_DATABASE_URL)
      expect(JSON.parse(banners[0]!)).toMatchObject({
        role: "primary",
        workers: 2,
        database: { engine: "postgresql", host: url.hostname, port: Number(url.port || 5432), name: expect.stringMatching(/^repomarket_test_[0-9a-f]+$/) }
      })
      if (url.password !== "") expect(server.stdout()).not.toContain(url.password)
    } finally {
      await server.kill()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 300_000)
})

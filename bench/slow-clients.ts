/**
 * What the Node host (`hosts/node/main.ts`, as `npm start` runs it) does with many slow connections from one
 * client while another client asks for `/healthz`. Not a test: the numbers depend on the machine.
 *
 *   npx tsx bench/slow-clients.ts [--connections 1500] [--seconds 100] [--mode headers|body] [--nofile 1024]
 *
 * The server runs in a child process under `ulimit -n <nofile>` (a common default open-files limit), on the
 * embedded database (PGlite in a temporary DATA_DIR), with the environment's connection settings
 * (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT...) passed through.
 *
 * - The slow client (127.0.0.1) opens `--connections` connections, one every 2 ms, and on each sends
 *   `--mode headers`: a request's headers one byte a second, never finishing them; `--mode body`: complete
 *   headers of a POST with a 1 000-byte body, then the body one byte a second.
 * - The other client (127.0.0.2) asks `GET /healthz` four times a second, each on a new connection, giving up
 *   after 5 s.
 *
 * Printed: the slow connections still open over time, how they ended (408 answered, closed without an answer,
 * refused at once), and the other client's answers and latency.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    connections: { type: "string", default: "1500" },
    seconds: { type: "string", default: "100" },
    mode: { type: "string", default: "headers" },
    nofile: { type: "string", default: "1024" }
  }
})
const CONNECTIONS = Number(values.connections)
const SECONDS = Number(values.seconds)
const MODE = values.mode === "body" ? "body" : "headers"
const NOFILE = Number(values.nofile)

const ROOT = join(import.meta.dirname, "..")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

const port = await freePort()
const dataDir = mkdtempSync(join(tmpdir(), "repomarket-slow-"))
const passed = ["HEADERS_TIMEOUT_MS", "REQUEST_TIMEOUT_MS", "KEEP_ALIVE_TIMEOUT_MS", "RESPONSE_STALL_TIMEOUT_MS", "MAX_CONNECTIONS", "MAX_CONNECTIONS_PER_CLIENT"]
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  PORT: String(port),
  DATA_DIR: dataDir,
  BASE_RPC_URL: "off",
  SOLANA_RPC_URL: "off",
  LOG_LEVEL: "WARN"
}
for (const name of passed) if (process.env[name] !== undefined) env[name] = process.env[name]!
const child = spawn("bash", ["-c", `ulimit -n ${NOFILE} && exec node_modules/.bin/tsx hosts/node/main.ts`], {
  cwd: ROOT,
  env,
  stdio: ["ignore", "pipe", "pipe"],
  detached: true
})
let output = ""
child.stdout!.on("data", (c) => (output += c))
child.stderr!.on("data", (c) => (output += c))
const stopServer = () => {
  try {
    process.kill(-child.pid!, "SIGKILL")
  } catch {
    // gone already
  }
  rmSync(dataDir, { recursive: true, force: true })
}
process.on("exit", stopServer)

for (let waited = 0; ; waited += 200) {
  const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false)
  if (ok) break
  if (waited > 120_000 || child.exitCode !== null) {
    console.error(`the server did not start:\n${output}`)
    process.exit(1)
  }
  await sleep(200)
}

interface Slow {
  readonly openedAt: number
  connected: boolean
  closedAt: number | null
  answer: string
}

const started = Date.now()
const at = () => (Date.now() - started) / 1000
const slow: Array<Slow> = []

const openSlow = () => {
  const s: Slow = { openedAt: Date.now(), connected: false, closedAt: null, answer: "" }
  slow.push(s)
  const socket: Socket = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.1" })
  const head = MODE === "headers"
    ? "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
    : "POST /auth/magic-link HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
  let timer: NodeJS.Timeout | undefined
  socket.on("connect", () => {
    s.connected = true
    socket.write(head)
    timer = setInterval(() => socket.write(MODE === "headers" ? "a" : " "), 1000)
  })
  socket.on("data", (d: Buffer) => {
    if (s.answer === "") s.answer = d.toString("latin1").split("\r\n")[0]!
  })
  socket.on("error", () => undefined)
  socket.on("close", () => {
    clearInterval(timer)
    s.closedAt = Date.now()
  })
}

interface Probe {
  readonly at: number
  readonly ms: number
  readonly outcome: string
}
const probes: Array<Probe> = []
const probe = () =>
  new Promise<void>((resolve) => {
    const t0 = Date.now()
    const done = (outcome: string) => {
      probes.push({ at: (t0 - started) / 1000, ms: Date.now() - t0, outcome })
      resolve()
    }
    const req = request({ host: "127.0.0.1", port, path: "/healthz", localAddress: "127.0.0.2", agent: false }, (res) => {
      res.resume()
      res.on("end", () => done(String(res.statusCode)))
    })
    req.setTimeout(5_000, () => req.destroy(new Error("timeout")))
    req.on("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message))
    req.end()
  })

let probing = true
const probeLoop = (async () => {
  while (probing) {
    void probe()
    await sleep(250)
  }
})()

for (let n = 0; n < CONNECTIONS; n++) {
  openSlow()
  if (n % 10 === 9) await sleep(20)
}

const marks = [1, 5, 10, 16, 20, 30, 35, 45, 60, 75, 90, 120, 180, 240, 300, 330].filter((m) => m <= SECONDS)
const rows: Array<string> = []
for (const mark of marks) {
  while (at() < mark) await sleep(50)
  const open = slow.filter((s) => s.connected && s.closedAt === null).length
  const window = probes.filter((p) => p.at >= mark - 5 && p.at < mark)
  const ok = window.filter((p) => p.outcome === "200")
  rows.push(`| ${mark} s | ${open} | ${ok.length}/${window.length} | ${ok.length ? Math.max(...ok.map((p) => p.ms)) : "-"} |`)
}
while (at() < SECONDS) await sleep(50)
probing = false
await probeLoop
await sleep(500)

const refusedAtOnce = slow.filter((s) => s.closedAt !== null && s.answer === "" && s.closedAt - s.openedAt < 500).length
const answered408 = slow.filter((s) => s.answer.includes(" 408 ")).length
const closedTimes = slow.filter((s) => s.closedAt !== null && s.answer !== "").map((s) => (s.closedAt! - s.openedAt) / 1000).sort((a, b) => a - b)
const outcomes = new Map<string, number>()
for (const p of probes) outcomes.set(p.outcome, (outcomes.get(p.outcome) ?? 0) + 1)
const okMs = probes.filter((p) => p.outcome === "200").map((p) => p.ms).sort((a, b) => a - b)
const q = (xs: ReadonlyArray<number>, f: number) => (xs.length === 0 ? "-" : String(xs[Math.min(xs.length - 1, Math.floor(f * xs.length))]))

console.log(`${new Date().toISOString().slice(0, 10)}, node ${process.version}, server under ulimit -n ${NOFILE}, ${CONNECTIONS} slow connections (${MODE}) from 127.0.0.1`)
console.log(`settings: ${passed.map((n) => `${n}=${env[n] ?? "default"}`).join(" ")}`)
console.log("")
console.log("| after | slow connections open | other client's /healthz OK in the last 5 s | its slowest OK (ms) |")
console.log("|---|---|---|---|")
for (const row of rows) console.log(row)
console.log("")
console.log(`slow connections: ${slow.filter((s) => s.connected).length} connected, ${refusedAtOnce} closed within 0.5 s without an answer, ${answered408} answered 408` +
  (closedTimes.length ? ` (after ${closedTimes[0]!.toFixed(1)} to ${closedTimes[closedTimes.length - 1]!.toFixed(1)} s)` : "") +
  `, ${slow.filter((s) => s.closedAt === null).length} still open at the end`)
console.log(`other client: ${probes.length} requests: ${[...outcomes].map(([k, v]) => `${v} × ${k}`).join(", ")}; OK latency p50 ${q(okMs, 0.5)} ms, p99 ${q(okMs, 0.99)} ms, max ${q(okMs, 1)} ms`)
const tail = output.split("\n").filter((l) => /error|EMFILE|refused|stalled/i.test(l)).slice(0, 5)
if (tail.length > 0) console.log(`server log (first lines naming errors or refusals):\n${tail.join("\n")}`)
process.exit(0)

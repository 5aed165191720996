/**
 * The worst MCP request (issue 39): one anonymous `POST /mcp` holding a JSON-RPC batch of 100 `get_repo` calls
 * of a large listed repo (a 512 KiB README, the GitHub adapter's most, and a 5 000-file tree), and the largest
 * batch still answered (4 `get_repo` from a 2025-03-26 client). Printed:
 * - each alone, then three at once (as from three addresses): the answer's bytes and time, and the server's RSS
 *   growth while in flight (its peak, sampled every 5 ms, less its settled RSS before);
 * - floods: `--attackers` clients each sending it again as soon as it is answered, while another client reads
 *   `GET /openapi.json` with `--connections` connections: that client's p99 and its ratio to its p99 alone and
 *   under a control flood of the cheapest MCP request (one JSON-RPC ping).
 * Targets (the issue's): answers bounded (≤ 1 MiB), RSS growth < 64 MiB, the other client unaffected.
 *
 *   npx tsx --expose-gc bench/mcp-worst.ts [--seconds 10] [--attackers 3] [--connections 2]
 *
 * The server runs in this process (memory storage, the in-memory code host); the other client is the forked
 * load client (autocannon), each attacker a forked copy of this script (`--attack`), so neither shares the
 * server's event loop. Per-client limits are off in bench apps (one loopback address stands for many clients).
 * A missed target is printed, not an exit failure.
 */
import { fork } from "node:child_process"
import { request } from "node:http"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { FakeRepo } from "../adapters/memory/CodeHostMemory.js"
import { fmt, MiB, ms, runMain, section, startBenchApp, startLoadClient, startWatchdog, teardown } from "./support.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    attackers: { type: "string", default: "3" },
    connections: { type: "string", default: "2" },
    // Internal: run as one attacker against this URL (forked by the main run), with the body and headers given as JSON.
    attack: { type: "string" },
    body: { type: "string" },
    headers: { type: "string" }
  }
})
const seconds = Number(values.seconds)
const attackers = Number.parseInt(values.attackers, 10)
const connections = Number.parseInt(values.connections, 10)
if (![seconds, attackers, connections].every((n) => Number.isFinite(n) && n > 0)) {
  console.error("--seconds, --attackers and --connections must be positive numbers")
  process.exit(2)
}

const OWNER = "mallory"
const NAME = "big"
const README_BYTES = 512 * 1024
const FILES = 5_000

/** The batch an attacker sends: `n` get_repo calls of the big repo. */
const batchOf = (n: number) =>
  JSON.stringify(Array.from({ length: n }, (_, i) => ({
    jsonrpc: "2.0",
    id: i + 1,
    method: "tools/call",
    params: { name: "get_repo", arguments: { repo: `${OWNER}/${NAME}` } }
  })))

interface AttackStats {
  readonly requests: number
  readonly statuses: Readonly<Record<string, number>>
  readonly maxBytes: number
  readonly totalBytes: number
  readonly maxMs: number
}

/** One POST, its body counted and dropped as it arrives. */
const postOnce = (url: string, body: string, headers: Record<string, string>) =>
  new Promise<{ status: number; bytes: number; ms: number }>((resolve, reject) => {
    const started = performance.now()
    const req = request(url, {
      method: "POST",
      agent: false,
      timeout: 180_000,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": Buffer.byteLength(body), ...headers }
    }, (res) => {
      let bytes = 0
      res.on("data", (c: Buffer) => void (bytes += c.length))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }))
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", reject)
    req.end(body)
  })

/** The attacker: the batch, again and again until `seconds` are up (the last one is waited for). */
const attack = async (url: string) => {
  const body = values.body ?? ""
  const headers = JSON.parse(values.headers ?? "{}") as Record<string, string>
  const statuses: Record<string, number> = {}
  let requests = 0
  let maxBytes = 0
  let totalBytes = 0
  let maxMs = 0
  const deadline = performance.now() + seconds * 1000
  while (performance.now() < deadline) {
    const answer = await postOnce(url, body, headers).catch((e: unknown) => ({ status: 0, bytes: 0, ms: 0, error: String(e) }))
    requests++
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
    maxBytes = Math.max(maxBytes, answer.bytes)
    totalBytes += answer.bytes
    maxMs = Math.max(maxMs, answer.ms)
  }
  return { requests, statuses, maxBytes, totalBytes, maxMs } satisfies AttackStats
}

const startAttacker = (url: string, body: string, headers: Readonly<Record<string, string>>) => {
  const child = fork(fileURLToPath(import.meta.url), [
    "--attack", url, "--seconds", String(seconds), "--body", body, "--headers", JSON.stringify(headers)
  ], { execArgv: process.execArgv.filter((a) => a !== "--expose-gc"), stdio: ["ignore", "inherit", "inherit", "ipc"] })
  return new Promise<AttackStats>((resolve, reject) => {
    child.once("message", (stats: AttackStats) => resolve(stats))
    child.once("exit", (code) => reject(new Error(`attacker exited (${code}) without its figures`)))
  })
}

/** The server's RSS, sampled every 5 ms until stopped: its peak. */
const rssPeak = () => {
  let peak = process.memoryUsage.rss()
  const timer = setInterval(() => void (peak = Math.max(peak, process.memoryUsage.rss())), 5)
  return () => {
    clearInterval(timer)
    return Math.max(peak, process.memoryUsage.rss())
  }
}

/** The server's RSS after a collection (with --expose-gc) and a moment's rest: where a phase starts from. */
const settledRss = async () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  await new Promise((resolve) => setTimeout(resolve, 500))
  return process.memoryUsage.rss()
}

const bigRepo = (): FakeRepo => {
  const line = "All work and no play makes a large README; every line of it travels in a preview.\n"
  const readme = `# big\n\n${line.repeat(Math.ceil(README_BYTES / line.length))}`.slice(0, README_BYTES)
  const files: Record<string, string> = { "README.md": readme }
  for (let i = 0; i < FILES; i++) files[`src/module-${i % 100}/a-rather-long-file-name-for-the-tree-${i}.ts`] = "export {}\n"
  return { owner: OWNER, name: NAME, description: "An attacker's own public repo", language: "TypeScript", files }
}

const main = async () => {
  const started = performance.now()
  startWatchdog(180 + 5 * (seconds + 15))
  const cleanups: Array<() => Promise<unknown> | unknown> = []
  try {
    const app = await startBenchApp({ repos: [bigRepo()], storage: "memory" })
    cleanups.push(app.close)
    const load = startLoadClient()
    cleanups.push(load.stop)
    const key = await app.apiKey("mallory@example.com")
    await app.list(key, { owner: OWNER, name: NAME }, "1.00")
    const mcp = `${app.origin}/mcp`
    // Warm: the page, once through each door.
    const warmPage = await fetch(`${app.origin}/r/${OWNER}/${NAME}`, { headers: { accept: "application/json" } })
    const pageBytes = (await warmPage.arrayBuffer()).byteLength
    await postOnce(mcp, batchOf(1).slice(1, -1), {})
    console.log(`  the repo page (GET /r/${OWNER}/${NAME}, JSON): ${fmt(pageBytes / 1024)} KiB; README ${README_BYTES / 1024} KiB, ${fmt(FILES)} files`)

    const other = (label: string) => load.ask({
      type: "load",
      url: `${app.origin}/openapi.json`,
      connections,
      seconds,
      expectedStatus: 200,
      headers: {}
    }, "load").then((r) => {
      console.log(`  other client, GET /openapi.json (${label}): ${fmt(r.stats.requests)} requests, p50 ${ms(r.stats.p50)}, p99 ${ms(r.stats.p99)}, unexpected ${r.stats.unexpected}`)
      return r.stats
    })

    // Warm-up, not measured: the other client's load and a few of each attack, so the phases below measure the
    // attack, not the first use of code paths and buffers.
    await load.ask({ type: "load", url: `${app.origin}/openapi.json`, connections, seconds: 3, expectedStatus: 200, headers: {} }, "load")
    for (let i = 0; i < 5; i++) {
      await postOnce(mcp, batchOf(100), {})
      await postOnce(mcp, batchOf(4), { "mcp-protocol-version": "2025-03-26" })
    }

    section(`baseline: ${connections} connection(s) of another client, no attack, ${seconds} s`)
    const base = await other("alone")

    // One request at a time (then three at once, as from three addresses): its bytes, time and the server's RSS
    // growth while it is in flight (the peak less the settled RSS before it).
    const worst = [
      { title: "a batch of 100 get_repo, no MCP-Protocol-Version (read as 2025-03-26)", batch: 100, headers: {} },
      { title: "a batch of 4 get_repo, MCP-Protocol-Version 2025-03-26 (the largest batch answered)", batch: 4, headers: { "mcp-protocol-version": "2025-03-26" } }
    ] as const
    const single: Array<{ title: string; bytes: number; growth: number; growth3: number }> = []
    for (const w of worst) {
      section(`one request: ${w.title}`)
      const body = batchOf(w.batch)
      let rss = await settledRss()
      let peak = rssPeak()
      const one = await postOnce(mcp, body, w.headers)
      const growth = (peak() - rss) / MiB
      rss = await settledRss()
      peak = rssPeak()
      const three = await Promise.all([0, 1, 2].map(() => postOnce(mcp, body, w.headers)))
      const growth3 = (peak() - rss) / MiB
      console.log(`  request ${fmt(Buffer.byteLength(body))} bytes; answer ${one.status}, ${fmt(one.bytes)} bytes, ${ms(one.ms)}; server RSS growth ${fmt(growth, 1)} MiB`)
      console.log(`  three at once: answers ${three.map((t) => `${t.status} ${fmt(t.bytes)} bytes in ${ms(t.ms)}`).join("; ")}; server RSS growth ${fmt(growth3, 1)} MiB`)
      single.push({ title: w.title, bytes: one.bytes, growth, growth3 })
    }

    // Floods: each attacker sends its request again as soon as the last is answered, while the other client
    // reads; first with the cheapest MCP request there is (one JSON-RPC ping) as the control.
    const floods = [
      { title: "control: one JSON-RPC ping per request", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), headers: {} },
      { title: worst[0].title, body: batchOf(100), headers: worst[0].headers },
      { title: worst[1].title, body: batchOf(4), headers: worst[1].headers }
    ]
    const flooded: Array<{ title: string; p99: number; ratio: number; requests: number; maxBytes: number }> = []
    for (const flood of floods) {
      section(`flood, ${attackers} attacker(s), ${seconds} s: ${flood.title}`)
      const rss = await settledRss()
      const peak = rssPeak()
      const [stats, ...attacks] = await Promise.all([other("during the flood"), ...Array.from({ length: attackers }, () => startAttacker(mcp, flood.body, flood.headers))])
      const growth = (peak() - rss) / MiB
      const requests = attacks.reduce((n, a) => n + a.requests, 0)
      const statuses: Record<string, number> = {}
      for (const a of attacks) for (const [code, n] of Object.entries(a.statuses)) statuses[code] = (statuses[code] ?? 0) + n
      const maxBytes = Math.max(...attacks.map((a) => a.maxBytes))
      const ratio = stats.p99 / Math.max(base.p99, 1)
      console.log(`  attackers: ${fmt(requests)} requests (${Object.entries(statuses).map(([code, n]) => `${fmt(n)}× ${code}`).join(", ")}), largest answer ${fmt(maxBytes)} bytes, slowest ${ms(Math.max(...attacks.map((a) => a.maxMs)))}`)
      console.log(`  other client's p99 ${ms(stats.p99)}: ${fmt(ratio, 2)}× its p99 alone; server RSS peak growth ${fmt(growth, 1)} MiB (garbage of ${fmt(requests / seconds)} requests/s included)`)
      flooded.push({ title: flood.title, p99: stats.p99, ratio, requests, maxBytes })
    }

    section("summary")
    console.log(`  other client alone: p99 ${ms(base.p99)}`)
    for (const r of single) {
      console.log(`  one request, ${r.title}: answer ${fmt(r.bytes)} bytes (target ≤ ${fmt(MiB)}: ${r.bytes <= MiB ? "met" : "MISSED"}), RSS growth ${fmt(r.growth, 1)} MiB, three at once ${fmt(r.growth3, 1)} MiB (target < 64 MiB: ${Math.max(r.growth, r.growth3) < 64 ? "met" : "MISSED"})`)
    }
    const control = flooded[0]!
    for (const r of flooded) {
      console.log(`  flood, ${r.title}: other client's p99 ${ms(r.p99)}, ${fmt(r.ratio, 2)}× alone, ${fmt(r.p99 / Math.max(control.p99, 1), 2)}× under the control flood`)
    }
  } finally {
    await teardown(cleanups, started)
  }
}

if (values.attack !== undefined) {
  // Exits once the figures are sent: exiting at once can lose the message.
  attack(values.attack).then((stats) => process.send!(stats, () => process.exit(0)), (e) => {
    console.error(e)
    process.exit(1)
  })
} else {
  runMain(main)
}

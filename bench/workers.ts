/**
 * Paid purchases against the reference server, with 1 and 2 worker processes, in one run:
 *
 *   - repomarket as `npm start` runs it (a child process, `WORKERS` = 1 or 2, PostgreSQL): the live checkout of a
 *     small repository, its archive streamed from a loopback fake GitHub, the sale recorded durably, the
 *     payment-attempt limit counted in PostgreSQL (shared by the workers), the webhook event queued;
 *   - Express 5 + `@x402/express` (bench/peer-express.ts, node:cluster with the same number of processes)
 *     selling a 512-byte static body and keeping nothing;
 *   - both against the same loopback facilitator (bench/support.ts: it checks each EIP-3009 signature and
 *     refuses a nonce twice), with payments pre-signed here (viem, random nonces) for each server's own 402.
 *
 * Printed: purchases/s, and server CPU per purchase (utime + stime of every process of the server, from /proc),
 * which is the steadier figure on a shared machine. The load comes from this process through 64 loopback
 * source addresses (127.0.<round>.x), so the per-address limit (60 payment attempts a minute) is not what is
 * measured.
 * With `--rounds N` the two servers are measured N times each, alternately (ours, theirs, ours, …), and the
 * summary gives the median of each: a moment of noise then moves one round, not the figure.
 *
 *   npx tsx bench/workers.ts [--payments 1200] [--concurrency 24] [--workers 1,2] [--rounds 1] [--cpu-prof DIR]
 *
 * `--cpu-prof DIR` writes a V8 CPU profile of each repomarket process to DIR (it is stopped with SIGTERM so
 * the profiles are written); open them in Chrome DevTools, or summarise with `node scripts/cpuProfileTop.mjs`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { loadavg } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { Effect, Exit, Scope } from "effect"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { transferWithAuthorizationTypes } from "../adapters/evm/EvmPayment.js"
import { closedPort } from "../test/faults/fakeFacilitator.js"
import { request as call, signInFromLog, startServer } from "../test/restart/serverProcess.js"
import { startFakeGithubServer } from "../test/support/fakeGithubServer.js"
import { postgresProblem, postgresTestDatabaseUrl } from "../test/support/postgres.js"
import type { WireRequirement } from "./load-client.js"
import { BENCH_WALLET, fmt, median, ms, runMain, section, startLoopbackFacilitator, startWatchdog, teardown } from "./support.js"

const { values } = parseArgs({
  options: {
    payments: { type: "string", default: "1200" },
    concurrency: { type: "string", default: "24" },
    workers: { type: "string", default: "1,2" },
    rounds: { type: "string", default: "1" },
    "cpu-prof": { type: "string" }
  }
})
const payments = Number.parseInt(values.payments, 10)
const concurrency = Number.parseInt(values.concurrency, 10)
const workerCounts = values.workers.split(",").map((w) => Number.parseInt(w, 10))
const rounds = Number.parseInt(values.rounds, 10)
if (!(payments > 0 && concurrency > 0 && workerCounts.every((w) => w >= 1 && w <= 8) && rounds >= 1 && rounds <= 9)) {
  console.error("--payments and --concurrency must be positive, --workers a list of 1..8, --rounds 1..9")
  process.exit(2)
}
startWatchdog(120 + workerCounts.length * rounds * 2 * (240 + 90))

const ROOT = join(import.meta.dirname, "..")
const TSX = join(ROOT, "node_modules/.bin/tsx")
const SMALL = { owner: "bench", name: "small", files: { "README.md": "# small\n", "index.ts": "export const x = 1\n" } }
const SECRET_KEYS = `bench:${Buffer.alloc(32, 5).toString("base64")}`
/** The node flags `npm start` gives the server (package.json), so the server here runs as it does there. */
const START_FLAGS = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start as string)
  .split(/\s+/).filter((arg) => arg.startsWith("--"))
const sleep = (n: number) => new Promise((r) => setTimeout(r, n))

/** utime + stime (ms) of every live process in a process group, from /proc (Linux, 100 ticks a second). */
const groupCpuMs = (pgid: number): number => {
  let ticks = 0
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8")
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12])
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10
}

const decode = (header: string | null) => JSON.parse(Buffer.from(header ?? "", "base64").toString("utf8"))

const challengeOf = async (url: string) => {
  const res = await fetch(url)
  await res.arrayBuffer()
  if (res.status !== 402) throw new Error(`${url}: expected 402, got ${res.status}`)
  const required = decode(res.headers.get("payment-required"))
  return { accepted: required.accepts[0] as WireRequirement, resource: required.resource }
}

const buyers = Array.from({ length: 8 }, () => privateKeyToAccount(generatePrivateKey()))

/** `n` distinct PAYMENT-SIGNATURE headers for one 402. */
const signPayments = async (n: number, accepted: WireRequirement, resource: unknown): Promise<Array<string>> => {
  const domain = { name: accepted.extra["name"]!, version: accepted.extra["version"]!, chainId: Number(accepted.network.split(":")[1]), verifyingContract: accepted.asset as Hex }
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600)
  return Promise.all(Array.from({ length: n }, async (_, i) => {
    const buyer = buyers[i % buyers.length]!
    const message = { from: buyer.address, to: accepted.payTo as Hex, value: BigInt(accepted.amount), validAfter: 0n, validBefore, nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex }
    const signature = await buyer.signTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message })
    const payload = { signature, authorization: { ...message, value: String(message.value), validAfter: "0", validBefore: String(validBefore) } }
    return Buffer.from(JSON.stringify({ x402Version: 2, resource, accepted, payload })).toString("base64")
  }))
}

/**
 * One agent per loopback source address, kept alive: 64 client addresses, as many buyers would be. Each round
 * has addresses of its own (127.0.<round>.x): a round of 3 000 payments spends ~47 of each address's 60
 * attempts a minute, so the next round from the same addresses would be refused.
 */
const agentsOf = (round: number) => Array.from({ length: 64 }, (_, i) => new Agent({ keepAlive: true, localAddress: `127.0.${round}.${i + 1}` }))

const buyOnce = (agents: ReadonlyArray<Agent>, url: string, header: string, i: number) =>
  new Promise<{ ok: boolean; status: number; ms: number }>((resolve) => {
    const t0 = performance.now()
    const req = request(url, { agent: agents[i % agents.length], headers: { "payment-signature": header } }, (res) => {
      let paid = res.headers["payment-response"] !== undefined
      res.on("data", () => undefined)
      res.on("end", () => resolve({ ok: res.statusCode === 200 && paid, status: res.statusCode ?? 0, ms: performance.now() - t0 }))
      res.on("error", () => (paid = false))
    })
    req.on("error", () => resolve({ ok: false, status: 0, ms: performance.now() - t0 }))
    req.end()
  })

interface Result {
  readonly perSecond: number
  readonly cpuPerPurchaseMs: number
  readonly ok: number
  readonly statuses: Record<string, number>
  readonly p50: number
  readonly p99: number
}

const purchase = async (url: string, headers: ReadonlyArray<string>, pgid: number, round: number): Promise<Result> => {
  const agents = agentsOf(round)
  // Warm-up: a few purchases outside the measurement (JIT, pools, caches).
  const warm = Math.min(48, Math.floor(headers.length / 10))
  for (let i = 0; i < warm; i++) await buyOnce(agents, url, headers[i]!, i)
  const cpu0 = groupCpuMs(pgid)
  const t0 = performance.now()
  const times: Array<number> = []
  const statuses: Record<string, number> = {}
  let ok = 0
  let next = warm
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < headers.length) {
      const i = next++
      const r = await buyOnce(agents, url, headers[i]!, i)
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
      if (r.ok) ok++
      times.push(r.ms)
    }
  }))
  const seconds = (performance.now() - t0) / 1000
  const cpuMs = groupCpuMs(pgid) - cpu0
  for (const agent of agents) agent.destroy()
  times.sort((a, b) => a - b)
  return { perSecond: ok / seconds, cpuPerPurchaseMs: cpuMs / Math.max(1, ok), ok, statuses, p50: times[Math.floor(times.length / 2)] ?? 0, p99: times[Math.floor(times.length * 0.99)] ?? 0 }
}

const spawnPeer = async (workers: number, facilitatorUrl: string, accepted: WireRequirement) => {
  const port = await closedPort()
  const child: ChildProcess = spawn(TSX, ["bench/peer-express.ts"], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"], HOME: process.env["HOME"], PORT: String(port), FACILITATOR_URL: facilitatorUrl, REQUIREMENT: JSON.stringify(accepted), ROUTE: "/paid", WORKERS: String(workers) },
    stdio: ["ignore", "inherit", "inherit"],
    detached: true
  })
  const url = `http://127.0.0.1:${port}/paid`
  for (let tries = 0; ; tries++) {
    const status = await fetch(url).then((r) => r.status, () => 0)
    // Every worker must be up: ask a few times in a row.
    if (status === 402 && tries > 5) break
    if (tries > 1200) throw new Error("the Express peer did not start")
    await sleep(status === 402 ? 200 : 100)
  }
  return { url, pgid: child.pid!, stop: () => { try { process.kill(-child.pid!, "SIGKILL") } catch { /* gone */ } } }
}

/** Each figure's median over the rounds (the statuses and counts are the rounds' sums). */
const medianOf = (results: ReadonlyArray<Result>): Result => ({
  perSecond: median(results.map((r) => r.perSecond)),
  cpuPerPurchaseMs: median(results.map((r) => r.cpuPerPurchaseMs)),
  ok: results.reduce((n, r) => n + r.ok, 0),
  statuses: results.reduce<Record<string, number>>((all, r) => {
    for (const [status, n] of Object.entries(r.statuses)) all[status] = (all[status] ?? 0) + n
    return all
  }, {}),
  p50: median(results.map((r) => r.p50)),
  p99: median(results.map((r) => r.p99))
})

const print = (label: string, r: Result) =>
  console.log(
    `  ${label.padEnd(48)} ${fmt(r.perSecond).padStart(5)} purchases/s   server CPU ${ms(r.cpuPerPurchaseMs).padStart(8)}/purchase` +
      `   p50 ${ms(r.p50)}  p99 ${ms(r.p99)}   ${r.ok} ok ${JSON.stringify(r.statuses)}`
  )

const main = async () => {
  const started = performance.now()
  const cleanups: Array<() => Promise<unknown> | unknown> = []
  const problem = await postgresProblem()
  if (problem !== undefined) throw new Error(`PostgreSQL is needed (several workers share it): ${problem}`)
  console.log(`Purchases vs Express + @x402/express: ${payments} payments per phase, ${concurrency} in flight, workers ${workerCounts.join(" and ")}`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (other work on this machine shares its cores)`)
  const rows: Array<{ workers: number; ours: Result; theirs: Result }> = []
  try {
    const facilitator = await startLoopbackFacilitator(["eip155:8453"])
    cleanups.push(facilitator.close)
    const github = await startFakeGithubServer([SMALL])
    cleanups.push(github.close)
    for (const workers of workerCounts) {
      section(`${workers} worker process${workers > 1 ? "es" : ""}`)
      const scope = Effect.runSync(Scope.make())
      cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
      const databaseUrl = await Effect.runPromise(Scope.extend(postgresTestDatabaseUrl, scope))
      const port = await closedPort()
      const env = {
        DATABASE_URL: databaseUrl, BASE_URL: `http://127.0.0.1:${port}`, GITHUB_API_URL: github.url, X402_FACILITATOR_URL: facilitator.url,
        SECRET_KEYS, WORKERS: String(workers), DATA_DIR: join(ROOT, ".data-bench-workers"), LOG_LEVEL: "WARN"
      }
      const server = await Effect.runPromise(Scope.extend(startServer(env, port, 240_000, [...START_FLAGS, ...(values["cpu-prof"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`])]), scope))
      const session = await Effect.runPromise(signInFromLog(server, "bench-workers@example.com"))
      const listed = await Effect.runPromise(call(server.origin, "POST", "/repos", { token: session, body: { host_url: "https://github.com/bench/small", price_usd: "0.50", wallet_base: BENCH_WALLET } }))
      if (listed.status !== 201) throw new Error(`listing: ${listed.status} ${listed.text}`)
      const ours402 = await challengeOf(listed.json.checkout_url)
      const peer = await spawnPeer(workers, facilitator.url, ours402.accepted)
      cleanups.push(peer.stop)
      const theirs402 = await challengeOf(peer.url)
      const processes = `${workers} process${workers > 1 ? "es" : ""}`
      const ourRounds: Array<Result> = []
      const theirRounds: Array<Result> = []
      for (let round = 1; round <= rounds; round++) {
        // Fresh payments every round: a nonce is spent once.
        const [oursHeaders, theirsHeaders] = [await signPayments(payments, ours402.accepted, ours402.resource), await signPayments(payments, theirs402.accepted, theirs402.resource)]
        const label = rounds > 1 ? `, round ${round}` : ""
        ourRounds.push(await purchase(listed.json.checkout_url, oursHeaders, server.child.pid!, round))
        print(`repomarket, live checkout, ${processes}${label}`, ourRounds.at(-1)!)
        theirRounds.push(await purchase(peer.url, theirsHeaders, peer.pgid, round))
        print(`express + @x402/express, ${processes}${label}`, theirRounds.at(-1)!)
      }
      const ours = medianOf(ourRounds)
      const sales = await Effect.runPromise(call(server.origin, "GET", "/my/sales?livemode=true", { token: session }))
      console.log(`  sales on the ledger: ${sales.json?.sales?.length ?? "?"} (first page) — purchases ok ${ours.ok} (+ warm-up)`)
      rows.push({ workers, ours, theirs: medianOf(theirRounds) })
      peer.stop()
      if (values["cpu-prof"] === undefined) await server.kill("SIGKILL")
      else await server.stop()
    }
    section(rounds > 1 ? `summary (median of ${rounds} rounds each)` : "summary")
    console.log("  | worker processes | repomarket purchases/s | express+x402 purchases/s | ratio | repomarket CPU/purchase | express+x402 CPU/purchase | ratio (per CPU-second) |")
    for (const { ours, theirs, workers } of rows) {
      console.log(
        `  | ${workers} | ${fmt(ours.perSecond)} | ${fmt(theirs.perSecond)} | ${fmt(ours.perSecond / theirs.perSecond, 2)}x | ${ms(ours.cpuPerPurchaseMs)} | ` +
          `${ms(theirs.cpuPerPurchaseMs)} | ${fmt(theirs.cpuPerPurchaseMs / ours.cpuPerPurchaseMs, 2)}x |`
      )
    }
    console.log(`  load average now: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  } finally {
    section("teardown")
    await teardown(cleanups.reverse(), started)
  }
}

runMain(main)

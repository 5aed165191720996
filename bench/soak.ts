/**
 * Soak: repomarket under a steady, modest mixed load for a fixed time, on PostgreSQL as bench/support.ts starts
 * it (in this process, so its memory is this process's), with the load from a forked process
 * (bench/soak-client.ts). Per second, by default: 20 repo-page JSON GETs, 15 unpaid 402 challenges on the test
 * checkout, 5 owner pages, 5 test-twin purchases with fresh pre-signed payments, and every 5 s a PATCH reprice of
 * a second listing (whose new test checkout must answer 402 and the voided one 410). Every 10 s one row: the
 * load's counts and this process's memory and event-loop delay. At the end a summary and PASS/FAIL.
 *
 *   npm run bench -- --soak 600        (or: npx tsx --expose-gc bench/soak.ts --seconds 600)
 *
 * FAIL when any 5xx was answered, when the sales in the database differ from the successful purchases, or
 * when the heap (after a forced GC; needs --expose-gc) grew by more than 64 MiB from before the load to after it.
 * Bounded: the load stops by itself, in-flight requests drain within 35 s, and a watchdog ends the run.
 */
import { type ChildProcess, fork } from "node:child_process"
import { cpus, loadavg } from "node:os"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { WireRequirement } from "./load-client.js"
import type { SoakCounts, SoakPlan, SoakRates, SoakReply, SoakRequest } from "./soak-client.js"
import { type BenchApp, fmt, MiB, repoWithArchiveOf, runMain, startBenchApp, teardown } from "./support.js"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "600" } } })
const seconds = /^\d+$/.test(values.seconds) ? Number(values.seconds) : Number.NaN
if (!(seconds >= 10 && seconds <= 3600)) {
  console.error(`--seconds must be a whole number of seconds from 10 to 3600 (got "${values.seconds}")`)
  process.exit(2)
}

const RATES: SoakRates = { repoPage: 20, challenge: 15, ownerPage: 5, purchase: 5, repriceEverySeconds: 5 }
const ROW_SECONDS = 10
const MAX_IN_FLIGHT = 32
const LOOP_RESOLUTION_MS = 10
const HEAP_LIMIT_MiB = 64
const gc = (globalThis as { gc?: () => void }).gc

const budgetSeconds = seconds + 180
const watchdog = setTimeout(() => {
  console.error(`WATCHDOG: the soak took over ${budgetSeconds} s; stopping (the database is not dropped).`)
  process.exit(3)
}, budgetSeconds * 1000)
watchdog.unref()

const mib = (bytes: number) => fmt(bytes / MiB, 1)

/** This process's memory, after a full GC when --expose-gc gave us one. */
const memory = () => {
  gc?.()
  return process.memoryUsage()
}

const challengeOf = async (url: string): Promise<{ accepted: WireRequirement; resource: unknown }> => {
  const res = await fetch(url)
  await res.arrayBuffer()
  const header = res.headers.get("payment-required")
  if (res.status !== 402 || header === null) throw new Error(`${url}: expected 402 with PAYMENT-REQUIRED, got ${res.status}`)
  const decoded = JSON.parse(Buffer.from(header, "base64").toString("utf8"))
  if (!Array.isArray(decoded.accepts) || decoded.accepts.length !== 1) throw new Error(`${url}: unexpected PAYMENT-REQUIRED ${JSON.stringify(decoded)}`)
  return { accepted: decoded.accepts[0], resource: decoded.resource }
}

const expectOk = async (url: string) => {
  const res = await fetch(url, { headers: { accept: "application/json" } })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`${url}: expected 200, got ${res.status} ${body.slice(0, 300)}`)
}

/** The load process and its replies, by type. */
const startClient = () => {
  const execArgv = process.execArgv.filter((a) => a !== "--expose-gc" && !a.startsWith("--cpu-prof") && !a.startsWith("--heap-prof"))
  const child: ChildProcess = fork(fileURLToPath(new URL("./soak-client.ts", import.meta.url)), [], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const waiting = new Map<SoakReply["type"], Array<{ resolve: (r: SoakReply) => void; reject: (e: Error) => void }>>()
  const failAll = (e: Error) => {
    for (const list of waiting.values()) for (const w of list.splice(0)) w.reject(e)
  }
  let exited = false
  child.on("exit", (code) => {
    exited = true
    failAll(new Error(`the load client exited (${code})`))
  })
  child.on("message", (reply: SoakReply) => {
    if (reply.type === "error") return failAll(new Error(`load client: ${reply.message}`))
    waiting.get(reply.type)?.shift()?.resolve(reply)
  })
  const next = <T extends SoakReply["type"]>(type: T, request?: SoakRequest) =>
    new Promise<Extract<SoakReply, { type: T }>>((resolve, reject) => {
      if (exited) return reject(new Error("the load client has exited"))
      const list = waiting.get(type) ?? []
      waiting.set(type, list)
      list.push({ resolve: resolve as (r: SoakReply) => void, reject })
      if (request) child.send(request)
    })
  const send = (request: SoakRequest) => void (exited || child.send(request))
  const stop = () => {
    if (!exited) child.disconnect()
    setTimeout(() => !exited && child.kill(), 1000).unref()
  }
  return { next, send, stop }
}

interface Row {
  readonly counts: SoakCounts
  readonly mem: NodeJS.MemoryUsage
  readonly loopP99: number
}

const header = () =>
  console.log(`  ${"elapsed".padStart(7)} ${"requests".padStart(8)} ${"req/s".padStart(5)} ${"2xx".padStart(6)} ${"4xx exp".padStart(7)} ${"4xx unexp".padStart(9)}` +
    ` ${"5xx".padStart(4)} ${"net err".padStart(7)} ${"purchases".padStart(9)} ${"rss".padStart(6)} ${"heapUsed".padStart(8)} ${"external".padStart(8)}` +
    ` ${"loop p99".padStart(8)} ${"lat p99".padStart(8)}   (memory in MiB, delays in ms)`)

const printRow = ({ counts: c, mem, loopP99 }: Row, previous: SoakCounts | undefined, label?: string) => {
  const dt = c.elapsedSeconds - (previous?.elapsedSeconds ?? 0)
  const rate = dt < 2 ? "-" : fmt((c.requests - (previous?.requests ?? 0)) / dt, 1)
  console.log(`  ${(label ?? `${fmt(c.elapsedSeconds)} s`).padStart(7)} ${fmt(c.requests).padStart(8)} ${rate.padStart(5)} ${fmt(c.ok2xx).padStart(6)}` +
    ` ${fmt(c.expected4xx).padStart(7)} ${fmt(c.unexpected4xx).padStart(9)} ${fmt(c.server5xx).padStart(4)} ${fmt(c.network).padStart(7)} ${fmt(c.purchasesOk).padStart(9)}` +
    ` ${mib(mem.rss).padStart(6)} ${mib(mem.heapUsed).padStart(8)} ${mib(mem.external).padStart(8)} ${fmt(loopP99, 1).padStart(8)} ${fmt(c.latencyP99, 1).padStart(8)}`)
}

const main = async () => {
  const started = performance.now()
  console.log(`Soak: ${seconds} s of mixed load, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")} at start`)
  console.log(`  per second: ${RATES.repoPage} repo-page JSON, ${RATES.challenge} 402 challenges, ${RATES.ownerPage} owner pages, ${RATES.purchase} test-twin purchases;` +
    ` a reprice every ${RATES.repriceEverySeconds} s (PATCH, then the new checkout's 402 and the voided one's 410)`)
  console.log(gc ? "  memory is sampled after a forced full GC (--expose-gc)" : "  !! --expose-gc not available: memory is sampled without a forced GC and the heap-growth check is NOT made")

  const cleanups: Array<() => Promise<void> | void> = []
  let interrupted = false
  try {
    const soakRepo = repoWithArchiveOf("bench", "soak", 64 * 1024)
    const repricedRepo = repoWithArchiveOf("bench", "repriced", 4 * 1024)
    const app: BenchApp = await startBenchApp({ repos: [soakRepo, repricedRepo] })
    cleanups.push(app.close)
    console.log(`  repomarket on ${app.origin} (storage ${app.storage})`)
    const key = await app.apiKey("soak-seller@example.com")
    const bought = await app.list(key, soakRepo, "0.50")
    const repriced = await app.list(key, repricedRepo, "1.00")
    const { accepted, resource } = await challengeOf(bought.testCheckoutUrl)
    await challengeOf(repriced.testCheckoutUrl)
    await expectOk(`${app.origin}/r/bench/soak`)
    await expectOk(`${app.origin}/r/bench`)

    const client = startClient()
    cleanups.push(client.stop)
    const plan: SoakPlan = {
      seconds, origin: app.origin, repoPage: "/r/bench/soak", ownerPage: "/r/bench",
      testCheckout: new URL(bought.testCheckoutUrl).pathname, accepted, resource,
      reprice: { path: "/repos/bench/repriced", apiKey: key, prices: ["1.25", "1.00"], testCheckout: new URL(repriced.testCheckoutUrl).pathname },
      rates: RATES, maxInFlight: MAX_IN_FLIGHT
    }
    const before = memory()
    const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
    const begun = await client.next("started", { type: "start", plan })
    loop.enable()
    console.log(`  pre-signed a first batch of ${begun.signed} payments in ${fmt(begun.signSeconds, 1)} s; more are signed as the load goes`)
    console.log(`  before the load: rss ${mib(before.rss)} MiB, heapUsed ${mib(before.heapUsed)} MiB, external ${mib(before.external)} MiB\n`)

    const onSignal = () => {
      if (interrupted) process.exit(130)
      interrupted = true
      console.log("\n  interrupted: stopping the load early (again to quit at once, leaving the database behind)")
      client.send({ type: "stop" })
    }
    process.on("SIGINT", onSignal)
    process.on("SIGTERM", onSignal)

    const rows: Array<Row> = []
    const sample = (counts: SoakCounts): Row => {
      // The histogram holds whole timer intervals: the delay is what exceeds the resolution.
      const loopP99 = Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS)
      const mem = memory()
      loop.reset()
      return { counts, mem, loopP99 }
    }
    header()
    let finished = false
    const done = client.next("done")
    const timer = setInterval(() => {
      client.next("stats", { type: "stats" }).then((r) => {
        if (finished) return
        const row = sample(r.counts)
        printRow(row, rows.at(-1)?.counts)
        rows.push(row)
      }, () => {})
    }, ROW_SECONDS * 1000)
    const final = (await done.finally(() => {
      finished = true
      clearInterval(timer)
    })).counts
    const last = sample(final)
    printRow(last, rows.at(-1)?.counts, "end")
    rows.push(last)
    loop.disable()
    const after = memory()

    // --- summary -----------------------------------------------------------------------------------------
    console.log("\n== summary")
    const run = final.elapsedSeconds
    // First and last minute; on a short run a third of it each (at least one row).
    const window = Math.max(ROW_SECONDS, Math.min(60, run / 3))
    const avgHeap = (rs: ReadonlyArray<Row>) => rs.reduce((n, r) => n + r.mem.heapUsed, 0) / Math.max(1, rs.length)
    const first = rows.filter((r) => r.counts.elapsedSeconds <= window + 1)
    const lastRows = rows.filter((r) => r.counts.elapsedSeconds >= run - window - 1)
    console.log(`  ${fmt(final.requests)} requests in ${fmt(run, 1)} s (${fmt(final.requests / run, 1)}/s); ${fmt(final.skipped)} skipped by the load client` +
      ` (${MAX_IN_FLIGHT} in flight, or no pre-signed payment); ${fmt(final.signed)} payments signed, ${fmt(final.reprices)} reprices`)
    console.log(`  heapUsed${gc ? " (after forced GC)" : ""}: first ${fmt(window)} s avg ${mib(avgHeap(first))} MiB -> last ${fmt(window)} s avg ${mib(avgHeap(lastRows))} MiB` +
      ` = ${fmt((avgHeap(lastRows) - avgHeap(first)) / MiB, 1)} MiB`)
    const growth = after.heapUsed - before.heapUsed
    console.log(`  heapUsed before the load ${mib(before.heapUsed)} MiB, after it ${mib(after.heapUsed)} MiB: growth ${fmt(growth / MiB, 1)} MiB` +
      (gc ? ` (limit ${HEAP_LIMIT_MiB} MiB)` : " (no forced GC: not judged)"))
    console.log(`  max rss ${mib(Math.max(...rows.map((r) => r.mem.rss), after.rss))} MiB; max event-loop delay p99 ${fmt(Math.max(...rows.map((r) => r.loopP99)), 1)} ms`)
    console.log(`  answers: ${fmt(final.ok2xx)} 2xx, ${fmt(final.expected4xx)} expected 4xx ${JSON.stringify(final.expected)}, ${fmt(final.unexpected4xx)} unexpected 4xx,` +
      ` ${fmt(final.server5xx)} 5xx, ${fmt(final.network)} network errors`)
    const errorKinds = Object.entries(final.errors).sort((a, b) => b[1] - a[1])
    console.log(`  errors by kind: ${errorKinds.length === 0 ? "none" : ""}`)
    for (const [kind, n] of errorKinds) console.log(`    ${fmt(n).padStart(7)}  ${kind}`)
    const sales = await app.salesOf(bought.checkoutId, false)
    const consistent = (sales["settled"] ?? 0) === final.purchasesOk && Object.keys(sales).every((s) => s === "settled")
    console.log(`  purchases ok ${fmt(final.purchasesOk)}, failed ${fmt(final.purchasesFailed)}; sales in the database ${JSON.stringify(sales)}:` +
      ` ${consistent ? "equal to the successful purchases" : "MISMATCH with the successful purchases"}`)

    const failures = [
      ...(final.server5xx > 0 ? [`${final.server5xx} answers were 5xx`] : []),
      ...(consistent ? [] : ["sales in the database differ from the successful purchases"]),
      ...(gc && growth > HEAP_LIMIT_MiB * MiB ? [`heap grew ${fmt(growth / MiB, 1)} MiB > ${HEAP_LIMIT_MiB} MiB`] : [])
    ]
    if (interrupted) console.log(`  (interrupted after ${fmt(run)} of ${seconds} s)`)
    const notes = [...(final.unexpected4xx + final.network > 0 ? ["unexpected 4xx or network errors above (not a FAIL by themselves)"] : []), ...(gc ? [] : ["heap growth not judged: run with --expose-gc"])]
    console.log(`  ${failures.length === 0 ? "PASS" : `FAIL: ${failures.join("; ")}`}${notes.length > 0 ? `  (note: ${notes.join("; ")})` : ""}`)
    if (failures.length > 0) process.exitCode = 1
  } finally {
    console.log("\n== teardown")
    await teardown(cleanups, started)
  }
}

runMain(main)

/**
 * Repo page benchmark, everything on loopback and measured in this one run: `GET /r/<owner>/<repo>` with
 * `Accept: application/json` (a listed repo's free preview: price, tree, README), warm, requests/s and p99,
 * versus a bare `node:http` server answering every request with exactly the same status, headers and body
 * bytes, alternated A, B, A, B… on the same machine; the median of each is compared.
 * Target: repomarket >= 0.5x the bare server's requests/s.
 *
 *   npx tsx bench/repo-page.ts [--seconds 10] [--connections 50] [--rounds 3]
 *
 * The servers run in this process (PostgreSQL, the in-memory code host); the load generator runs in a forked
 * process (bench/load-client.ts, autocannon). Any answer other than 200 counts as an error and is printed.
 * A missed target is printed, not an exit failure; a broken run (wrong status, setup failure) exits non-zero.
 * Bounded: every phase has a time limit, and a watchdog ends the run if anything hangs.
 */
import { get, type OutgoingHttpHeaders } from "node:http"
import { cpus, loadavg } from "node:os"
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import type { FakeRepo } from "../adapters/memory/CodeHostMemory.js"
import type { LoadStats } from "./load-client.js"
import { fmt, type LoadClient, median, ms, runMain, sampler, section, startBareServer, startBenchApp, startLoadClient, startWatchdog, teardown } from "./support.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" }
  }
})
const seconds = Number(values.seconds)
const connections = Number.parseInt(values.connections, 10)
const rounds = Number.parseInt(values.rounds, 10)
if (![seconds, connections, rounds].every((n) => Number.isFinite(n) && n > 0)) {
  console.error("--seconds, --connections and --rounds must be positive numbers")
  process.exit(2)
}

const TARGET = 0.5
const PRICE_USD = "0.50"
/** Before every measured run, of either server. */
const WARMUP_SECONDS = 1
const WARMUP_FETCHES = 5
const ACCEPT = { accept: "application/json" }
/** Hop-by-hop or per-answer headers: not part of what the page sends. */
const DROPPED = new Set(["date", "connection", "keep-alive", "transfer-encoding"])

// The watchdog: whatever hangs, the run ends.
const budgetSeconds = 90 + rounds * 2 * (seconds + WARMUP_SECONDS + 2)
startWatchdog(budgetSeconds)

// ---------------------------------------------------------------------------------------------------------


/** A listed repo as a seller's would be: a README of a few KiB of markdown and a handful of files. */
const benchRepo = (): FakeRepo => {
  const sections = ["Install", "Quick start", "Configuration", "API", "Examples", "FAQ", "Contributing", "License"]
  const readme = [
    "# widget-kit",
    "",
    "A small, dependency-free toolkit for building **widgets** that render on the server and hydrate in the browser.",
    "It is what this benchmark sells: the page shows this README, the file tree and the price.",
    "",
    "[![build](https://example.com/badge.svg)](https://example.com/ci) [![npm](https://example.com/npm.svg)](https://example.com/npm)",
    "",
    ...sections.flatMap((title, i) => [
      `## ${title}`,
      "",
      `Section ${i + 1} explains ${title.toLowerCase()} in some detail, with a list, a table and a code sample, so the`,
      "README is the size of a real one rather than a stub. Links like [the docs](https://example.com/docs) and `inline code`",
      "are kept as they are; characters that need escaping in HTML (<, >, & and \"quotes\") appear too.",
      "",
      "- first point: what it does and why it matters",
      "- second point: what it does not do, on purpose",
      "- third point: where to read more",
      "",
      "| option | default | meaning |",
      "|---|---|---|",
      `| \`${title.toLowerCase().replace(/ /g, "_")}\` | \`true\` | turns ${title.toLowerCase()} on or off |`,
      "",
      "```ts",
      `import { widget } from "widget-kit"`,
      "",
      `const w = widget({ name: "${title}", size: ${(i + 1) * 8} })`,
      "w.render(document.getElementById(\"root\")!)",
      "```",
      ""
    ])
  ].join("\n")
  return {
    owner: "bench",
    name: "widget-kit",
    description: "Server-rendered widgets that hydrate in the browser",
    language: "TypeScript",
    stars: 128,
    topics: ["widgets", "ssr", "typescript"],
    license: "MIT",
    files: {
      "README.md": readme,
      "LICENSE": "MIT License\n\nCopyright (c) bench\n",
      "package.json": JSON.stringify({ name: "widget-kit", version: "1.2.3", type: "module", main: "dist/index.js" }, null, 2),
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "NodeNext" } }, null, 2),
      "src/index.ts": "export { widget } from \"./widget.js\"\n",
      "src/widget.ts": "export const widget = (o: { name: string; size: number }) => ({ ...o, render: (_el: unknown) => {} })\n",
      "src/lib/escape.ts": "export const escape = (s: string) => s.replace(/[&<>\"]/g, (c) => `&#${c.charCodeAt(0)};`)\n",
      "test/widget.test.ts": "import { widget } from \"../src/index.js\"\nwidget({ name: \"t\", size: 1 })\n",
      "docs/guide.md": "# Guide\n\nMore than the README says.\n"
    }
  }
}

interface Captured {
  readonly status: number
  readonly headers: OutgoingHttpHeaders
  readonly body: Buffer
  /** The app answered with chunked encoding: the bare server sends a content-length instead. */
  readonly chunked: boolean
}

/** One GET as autocannon sends it (no accept-encoding, nothing decoded): status, headers (as named) and raw body. */
const capture = (url: string) =>
  new Promise<Captured>((resolve, reject) => {
    const req = get(url, { headers: ACCEPT, timeout: 10_000 }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const body = Buffer.concat(chunks)
        const headers: OutgoingHttpHeaders = {}
        let chunked = false
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!
          const value = res.rawHeaders[i + 1]!
          if (name.toLowerCase() === "transfer-encoding") chunked = true
          if (DROPPED.has(name.toLowerCase())) continue
          const previous = headers[name]
          headers[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [String(previous)]), value]
        }
        if (!Object.keys(headers).some((n) => n.toLowerCase() === "content-length")) headers["content-length"] = body.length
        resolve({ status: res.statusCode ?? 0, headers, body, chunked })
      })
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(new Error(`${url}: no answer within 10 s`)))
    req.on("error", reject)
  })

const headerOf = (c: Captured, name: string) => {
  const key = Object.keys(c.headers).find((n) => n.toLowerCase() === name)
  return key === undefined ? undefined : String(c.headers[key])
}

/** The warm page: fetched a few times, each 200 JSON with the seeded preview; the last one is what the bare server sends. */
const warmPage = async (url: string, repo: FakeRepo): Promise<Captured> => {
  let last: Captured | undefined
  let varied = false
  for (let i = 0; i < WARMUP_FETCHES; i++) {
    const c = await capture(url)
    const type = headerOf(c, "content-type") ?? ""
    if (c.status !== 200 || !/^application\/json\b/i.test(type)) {
      throw new Error(`${url} (Accept: application/json): expected 200 JSON, got ${c.status} ${type}: ${c.body.subarray(0, 300).toString("utf8")}`)
    }
    const page = JSON.parse(c.body.toString("utf8"))
    const files = Object.keys(repo.files ?? {}).length
    const entries = page?.tree?.entries?.filter((e: { type: string }) => e.type === "file").length
    if (page?.preview_available !== true || typeof page?.readme?.markdown !== "string" || entries !== files) {
      throw new Error(`${url}: the page does not show the seeded preview (preview_available ${page?.preview_available}, readme ${page?.readme === null ? "null" : typeof page?.readme}, ${entries} files of ${files})`)
    }
    if (last !== undefined && !last.body.equals(c.body)) varied = true
    last = c
  }
  if (varied) console.log("  !! the page's body changed between warm-up fetches: the bare server sends the last one")
  return last!
}


interface Run {
  readonly stats: LoadStats
  readonly server: ReturnType<ReturnType<typeof sampler>>
  /** Server CPU per request, µs. */
  readonly cpuUs: number
}

const loadRun = async (client: LoadClient, url: string, runSeconds: number): Promise<Run> => {
  const done = sampler()
  const { stats } = await client.ask({ type: "load", url, connections, seconds: runSeconds, expectedStatus: 200, headers: ACCEPT }, "load")
  const server = done()
  return { stats, server, cpuUs: (server.cpuMs * 1000) / Math.max(1, stats.requests) }
}

const printRun = (label: string, { stats: s, server, cpuUs }: Run) => {
  console.log(
    `  ${label.padEnd(22)} ${fmt(s.perSecond).padStart(7)} req/s   p50 ${ms(s.p50).padStart(8)}   p99 ${ms(s.p99).padStart(8)}` +
      `   non-200 ${s.unexpected}   server CPU ${fmt(cpuUs).padStart(5)} µs/req, loop ${fmt(server.elu * 100)}% busy, ${fmt(server.cpuShare * 100)}% of a core` +
      `   ${fmt(s.bytes / Math.max(1, s.requests))} B/answer`
  )
  if (s.unexpected > 0) {
    console.log(`  ${"".padEnd(22)} !! ${s.unexpected} answers not 200: statuses ${JSON.stringify(s.statusCounts)}, socket errors ${s.errors}, timeouts ${s.timeouts}`)
  }
}

// ---------------------------------------------------------------------------------------------------------

const main = async () => {
  const started = performance.now()
  console.log(`Repo page benchmark: ${cpus().length} cores; ${rounds}× A/B rounds of ${seconds} s at ${connections} connections,`)
  console.log(`a ${WARMUP_SECONDS} s warm-up before each run; GET /r/<owner>/<repo> with Accept: application/json, warm.`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (other work on this machine shares its cores)`)

  const cleanups: Array<() => Promise<void> | void> = []
  try {
    section("setup")
    const repo = benchRepo()
    const app = await startBenchApp({ repos: [repo] })
    cleanups.push(app.close)
    console.log(`  repomarket on ${app.origin} (storage ${app.storage})`)
    const key = await app.apiKey("bench-seller@example.com")
    await app.list(key, repo, PRICE_USD)
    const path = `/r/${repo.owner}/${repo.name}`
    const url = `${app.origin}${path}`
    const readmeBytes = Buffer.byteLength(repo.files!["README.md"]!)
    console.log(`  listed ${repo.owner}/${repo.name} at $${PRICE_USD}: README ${fmt(readmeBytes / 1024, 1)} KiB, ${Object.keys(repo.files!).length} files`)

    const page = await warmPage(url, repo)
    console.log(`  warm: ${WARMUP_FETCHES} fetches, each 200 JSON with the README and the tree`)
    console.log(`  body ${fmt(page.body.length)} bytes${page.chunked ? " (the app sent it chunked; the bare server sends a content-length)" : ""}`)
    const sample = Object.entries(page.headers).map(([n, v]) => `${n}: ${String(v)}`).join("; ")
    console.log(`  headers: ${sample.length > 240 ? `${sample.slice(0, 237)}...` : sample}`)

    const bare = await startBareServer(page.status, page.headers, page.body, path)
    cleanups.push(bare.close)
    const echoed = await capture(bare.url)
    if (echoed.status !== page.status || !echoed.body.equals(page.body)) {
      throw new Error(`the bare server does not send the page's bytes (status ${echoed.status}, ${echoed.body.length} bytes)`)
    }
    console.log(`  bare node:http on ${bare.url}: the same status, headers and ${fmt(page.body.length)} body bytes`)

    const client = startLoadClient()
    cleanups.push(client.stop)

    section(`repo page JSON, ${connections} connections, ${rounds} rounds of ${seconds} s each, alternating`)
    const ours: Array<Run> = []
    const theirs: Array<Run> = []
    for (let round = 1; round <= rounds; round++) {
      await loadRun(client, url, WARMUP_SECONDS)
      const a = await loadRun(client, url, seconds)
      printRun(`repomarket (round ${round})`, a)
      await loadRun(client, bare.url, WARMUP_SECONDS)
      const b = await loadRun(client, bare.url, seconds)
      printRun(`bare http  (round ${round})`, b)
      ours.push(a)
      theirs.push(b)
    }
    const unexpected = [...ours, ...theirs].reduce((n, r) => n + r.stats.unexpected, 0)
    const rps = (runs: ReadonlyArray<Run>) => median(runs.map((r) => r.stats.perSecond))
    const p99 = (runs: ReadonlyArray<Run>) => median(runs.map((r) => r.stats.p99))
    const cpu = (runs: ReadonlyArray<Run>) => median(runs.map((r) => r.cpuUs))
    const ratio = rps(ours) / rps(theirs)
    console.log(`  median: repomarket ${fmt(rps(ours))} req/s, p99 ${ms(p99(ours))}, server CPU ${fmt(cpu(ours))} µs/req`)
    console.log(`          bare http  ${fmt(rps(theirs))} req/s, p99 ${ms(p99(theirs))}, server CPU ${fmt(cpu(theirs))} µs/req`)
    console.log(`  non-200 answers (and socket errors, timeouts): ${unexpected}`)
    console.log(`  load average now: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)

    section("summary")
    console.log(`  repo page JSON (${fmt(page.body.length)} B body, ${app.storage}): repomarket ${fmt(rps(ours))} req/s vs bare node:http ${fmt(rps(theirs))} req/s` +
      ` = ${fmt(ratio, 2)}x (target >= ${TARGET}x): ${ratio >= TARGET ? "MET" : "MISSED"}`)
    console.log(`  p99: repomarket ${ms(p99(ours))}, bare node:http ${ms(p99(theirs))}`)
    if (unexpected > 0) {
      console.log(`  !! ${unexpected} answers were not 200: the run is not a measurement of the page`)
      process.exitCode = 1
    }
  } finally {
    section("teardown")
    await teardown(cleanups, started)
  }
}

runMain(main)

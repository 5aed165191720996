/**
 * `npm run bench`: every benchmark in sequence, each in its own process, its output under a heading, with
 * the machine it ran on at the top. Each script measures its own baseline in the same run.
 *
 *   npm run bench [-- --quick] [-- --only repo-page,checkout,sales-recording,archive-stream,webhook-burst,workers,purchase-parts,catalog,lambda-cold-start,startup,mcp-worst]
 *
 * A script that is not there (yet) is skipped and said so.
 *
 * `--quick` runs each with small settings (a smoke run, not numbers to quote).
 *
 *   npm run bench -- --soak <seconds>
 *
 * runs only the soak (bench/soak.ts: a steady mixed load for 10..3600 seconds, memory and error counts every
 * 10 s, PASS/FAIL at the end) instead of the benchmarks.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { arch, cpus, loadavg, platform, release, totalmem } from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const options = {
  quick: { type: "boolean", default: false },
  only: { type: "string" },
  soak: { type: "string" }
} as const
const { values } = (() => {
  try {
    return parseArgs({ options })
  } catch (e) {
    // e.g. `--soak` with no number after it
    console.error(e instanceof Error ? e.message : String(e))
    process.exit(2)
  }
})()

interface Bench {
  readonly name: string
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly quickArgs: ReadonlyArray<string>
  /** Extra node flags (archive-stream samples the heap after a forced GC). */
  readonly nodeFlags: ReadonlyArray<string>
  /** The script stops by itself well before this; past it, it is killed. */
  readonly timeoutSeconds: number
}

const benches: ReadonlyArray<Bench> = [
  { name: "repo-page", file: "repo-page.ts", args: [], quickArgs: ["--seconds", "3", "--rounds", "1"], nodeFlags: [], timeoutSeconds: 240 },
  { name: "checkout", file: "checkout.ts", args: [], quickArgs: ["--seconds", "3", "--rounds", "1", "--payments", "300"], nodeFlags: [], timeoutSeconds: 420 },
  { name: "sales-recording", file: "sales-recording.ts", args: [], quickArgs: ["--n", "300"], nodeFlags: [], timeoutSeconds: 300 },
  { name: "archive-stream", file: "archive-stream.ts", args: [], quickArgs: ["--mib", "128"], nodeFlags: ["--expose-gc"], timeoutSeconds: 300 },
  { name: "webhook-burst", file: "webhook-burst.ts", args: [], quickArgs: ["--n", "1000", "--timeout", "60"], nodeFlags: [], timeoutSeconds: 240 },
  { name: "workers", file: "workers.ts", args: [], quickArgs: ["--payments", "300"], nodeFlags: [], timeoutSeconds: 900 },
  { name: "purchase-parts", file: "purchase-parts.ts", args: [], quickArgs: ["--n", "300"], nodeFlags: [], timeoutSeconds: 600 },
  { name: "catalog", file: "catalog.ts", args: [], quickArgs: ["--seconds", "3", "--samples", "20"], nodeFlags: [], timeoutSeconds: 900 },
  { name: "lambda-cold-start", file: "lambda-cold-start.ts", args: [], quickArgs: ["--runs", "1"], nodeFlags: [], timeoutSeconds: 600 },
  { name: "startup", file: "startup.ts", args: [], quickArgs: ["--rounds", "1"], nodeFlags: [], timeoutSeconds: 300 },
  { name: "mcp-worst", file: "mcp-worst.ts", args: [], quickArgs: ["--seconds", "3"], nodeFlags: ["--expose-gc"], timeoutSeconds: 300 }
]

/** `--soak <seconds>`: a whole number from 10 to 3600, alone (not with --quick or --only). */
const soakSeconds = (() => {
  if (values.soak === undefined) return undefined
  const n = /^\d+$/.test(values.soak.trim()) ? Number(values.soak.trim()) : Number.NaN
  if (!(n >= 10 && n <= 3600)) {
    console.error(`--soak ${JSON.stringify(values.soak)}: expected a whole number of seconds from 10 to 3600, e.g. \`npm run bench -- --soak 600\``)
    process.exit(2)
  }
  if (values.quick || values.only !== undefined) {
    console.error("--soak runs alone: drop --quick and --only (or run the benchmarks without --soak)")
    process.exit(2)
  }
  return n
})()

const soak: Bench | undefined = soakSeconds === undefined ? undefined : {
  name: "soak",
  file: "soak.ts",
  args: ["--seconds", String(soakSeconds)],
  quickArgs: [],
  nodeFlags: ["--expose-gc"],
  // Setup, the load, a 35 s drain and teardown fit well inside this; past it, it is killed.
  timeoutSeconds: soakSeconds + 240
}

const only = values.only?.split(",").map((s) => s.trim()).filter((s) => s !== "")
const unknown = only?.filter((name) => !benches.some((b) => b.name === name)) ?? []
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${benches.map((b) => b.name).join(", ")}`)
  process.exit(2)
}

const GiB = 1024 ** 3
const rule = "=".repeat(100)

const machine = () => {
  const cpu = cpus()
  console.log(rule)
  console.log("repomarket benchmarks")
  console.log(`  date     ${new Date().toISOString()}`)
  console.log(`  cpu      ${cpu[0]?.model ?? "unknown"} × ${cpu.length} cores`)
  console.log(`  memory   ${(totalmem() / GiB).toFixed(1)} GiB`)
  console.log(`  node     ${process.version} (${platform()} ${release()} ${arch()})`)
  console.log(`  load     ${loadavg().map((l) => l.toFixed(2)).join(" ")} (1, 5, 15 min): other work on the machine shares its cores`)
  console.log(`  database ${process.env.TEST_DATABASE_URL ? "TEST_DATABASE_URL" : "postgres://postgres@127.0.0.1:5432 (default)"}; each script creates and drops its own database`)
  if (values.quick) console.log("  mode     --quick: small settings, a smoke run; do not quote these numbers")
  console.log(rule)
}

/** Runs one script under the same loader as this one (tsx), in its own process group so a timeout kills it all. */
const runOne = (bench: Bench, path: string) =>
  new Promise<{ code: number | null; seconds: number }>((resolve) => {
    const started = performance.now()
    const args = [...process.execArgv, ...bench.nodeFlags, path, ...(values.quick ? bench.quickArgs : bench.args)]
    const child = spawn(process.execPath, args, { stdio: "inherit", detached: true })
    const timer = setTimeout(() => {
      console.error(`\n!! ${bench.name} did not finish within ${bench.timeoutSeconds} s: killed`)
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    }, bench.timeoutSeconds * 1000)
    const forward = (signal: NodeJS.Signals) => () => {
      if (child.pid !== undefined) process.kill(-child.pid, signal)
    }
    const onInt = forward("SIGINT")
    const onTerm = forward("SIGTERM")
    process.once("SIGINT", onInt)
    process.once("SIGTERM", onTerm)
    child.on("exit", (code) => {
      clearTimeout(timer)
      process.off("SIGINT", onInt)
      process.off("SIGTERM", onTerm)
      resolve({ code, seconds: (performance.now() - started) / 1000 })
    })
  })

const main = async () => {
  machine()
  const results: Array<{ name: string; status: string; seconds: number }> = []
  for (const bench of soak ? [soak] : benches) {
    if (only !== undefined && !only.includes(bench.name)) continue
    const path = fileURLToPath(new URL(`./${bench.file}`, import.meta.url))
    console.log(`\n${"#".repeat(100)}\n# ${bench.name}  (bench/${bench.file} ${(values.quick ? bench.quickArgs : bench.args).join(" ")})\n${"#".repeat(100)}`)
    if (!existsSync(path)) {
      console.log("  (not present: skipped)")
      results.push({ name: bench.name, status: "absent", seconds: 0 })
      continue
    }
    const { code, seconds } = await runOne(bench, path)
    results.push({ name: bench.name, status: code === 0 ? "ok" : `exit ${code ?? "killed"}`, seconds })
  }
  console.log(`\n${rule}\nsummary`)
  for (const r of results) console.log(`  ${r.name.padEnd(18)} ${r.status.padEnd(10)} ${r.seconds.toFixed(1)} s`)
  if (soak) console.log("  (the soak fails on any 5xx, on sales in the database other than the successful purchases, or on heap growth over 64 MiB)")
  else {
    console.log("  (the exit status of each script: repo-page fails only on an answer other than 200, checkout only when a")
    console.log("   consistency check fails, archive-stream when its heap target is missed; whether each target was met is")
    console.log("   printed in its section)")
  }
  process.exitCode = results.every((r) => r.status === "ok" || r.status === "absent") ? 0 : 1
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})

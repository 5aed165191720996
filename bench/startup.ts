/**
 * `npm start` two ways: the TypeScript sources through tsx (compiled on load) against the compiled `dist/`
 * with plain node. Each round starts a fresh process on a free port with a fresh DATA_DIR (embedded PGlite,
 * as `npm start` runs on a fresh clone) and measures process start → first 200 from /healthz, and the RSS of
 * the whole process tree then. Rounds alternate; medians are printed. Builds dist/ if it is missing.
 *
 *   tsx bench/startup.ts [--rounds 3]
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { fmt, freePort, median, runMain } from "./support.js"

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" } } })
const rounds = Number(values.rounds)
const root = new URL("../", import.meta.url).pathname

const ways = {
  "tsx (sources)": [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "hosts/node/main.ts")],
  "node (dist/)": [join(root, "dist/hosts/node/main.js")]
} as const

/** Resident memory of a process and all its descendants (tsx runs the app in a child of its CLI). */
const treeRssKiB = (pid: number): number => {
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)
  const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
    } catch {
      return []
    }
  })
  return rss + children.reduce((sum, child) => sum + treeRssKiB(child), 0)
}

// The embedded database, as on a fresh clone, even where the caller has a DATABASE_URL.
const { DATABASE_URL: _ignored, ...withoutDatabaseUrl } = process.env

const once = async (args: ReadonlyArray<string>) => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "repomarket-startup-"))
  const started = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...withoutDatabaseUrl, PORT: String(port), DATA_DIR: dataDir, BASE_RPC_URL: "off", SOLANA_RPC_URL: "off" },
    stdio: "ignore"
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}`)
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false)
      if (ok) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return { ms: performance.now() - started, rssMiB: treeRssKiB(child.pid!) / 1024 }
  } finally {
    child.kill("SIGTERM")
    await new Promise((resolve) => child.once("exit", resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

runMain(async () => {
  if (!existsSync(ways["node (dist/)"][0])) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" })
  const results = new Map<string, Array<{ ms: number; rssMiB: number }>>()
  for (let round = 0; round < rounds; round++) {
    for (const [name, args] of Object.entries(ways)) {
      const r = await once(args)
      results.set(name, [...(results.get(name) ?? []), r])
      console.log(`  round ${round + 1} ${name.padEnd(14)} ${fmt(r.ms)} ms to the first 200, RSS ${fmt(r.rssMiB, 1)} MiB`)
    }
  }
  const summary = [...results].map(([name, rs]) => ({ name, ms: median(rs.map((r) => r.ms)), rss: median(rs.map((r) => r.rssMiB)) }))
  const [tsx, node] = summary
  for (const s of summary) console.log(`${s.name.padEnd(14)} start → first 200: ${fmt(s.ms)} ms (median of ${rounds}), RSS ${fmt(s.rss, 1)} MiB`)
  console.log(`node (dist/) vs tsx: start ${fmt(node!.ms / tsx!.ms, 2)}x the time, RSS ${fmt(node!.rss / tsx!.rss, 2)}x`)
})

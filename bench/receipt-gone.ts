/**
 * Receipt requests of a repository that is gone (issue 39): what 100 requests of one receipt link cost the code
 * host when the repository behind it no longer answers. Not a test: nothing here fails on a figure; it prints a table.
 *
 *   npx tsx bench/receipt-gone.ts [--requests 100] [--root <checkout>]
 *
 * `--root` runs the server from another checkout (a `git worktree` of an older commit, with node_modules) to
 * measure the code before a change; the bench itself, the fake GitHub and the clients are this checkout's.
 *
 * The server is repomarket as `npm start` runs it (`tsx hosts/node/main.ts`, a child process on the embedded
 * database in a temporary DATA_DIR), with the GitHub adapter pointed at a fake GitHub on loopback
 * (test/support/fakeGithubServer.ts, which counts every request it answers) and live payments through a
 * loopback facilitator (bench/support.ts). The attack, as the fourth audit made it: a free account lists its own
 * public repository (anonymously, with updates), buys it on the test twin (no money), and deletes the repository
 * on GitHub. The server is then restarted on the same DATA_DIR, which is what the 10-minute cache of GitHub's
 * answers going stale looks like (the cache is per process). Then, each request from another loopback address
 * (127.0.<n>.<m>, as a botnet or an IPv6 range would ask): `--requests` GET <receipt>/provenance, as many
 * GET <receipt>, as many GET <receipt>/latest. Counted: GitHub requests per phase. Last, an honest buyer of
 * another listing pays live: does it get its goods?
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { startFakeGithubServer } from "../test/support/fakeGithubServer.js"
import { fetchFrom, paymentFor, postJson, receiptLink, serverEnv, signIn, spawnedServer } from "./spawnedServer.js"
import { BENCH_WALLET, fmt, freePort, runMain, section, startLoopbackFacilitator, startWatchdog } from "./support.js"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "100" },
    root: { type: "string" }
  }
})
const REQUESTS = Number.parseInt(values.requests, 10)
if (!(REQUESTS > 0 && REQUESTS <= 2000)) {
  console.error("--requests must be a whole number from 1 to 2000")
  process.exit(2)
}
startWatchdog(900)

const HERE = join(import.meta.dirname, "..")
const ROOT = values.root === undefined ? HERE : resolve(values.root)
const commitOf = (dir: string) => {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

const main = async () => {
  const started = performance.now()
  const cleanups: Array<() => unknown> = []
  try {
    const github = await startFakeGithubServer([
      { owner: "mallory", name: "gone", description: "the attacker's own repo", files: { "README.md": "# gone\n", "a.txt": "a\n" } },
      { owner: "honest", name: "tool", description: "somebody else's listing", files: { "README.md": "# tool\n", "tool.ts": "export {}\n" } }
    ])
    cleanups.push(github.close)
    const facilitator = await startLoopbackFacilitator(["eip155:8453"])
    cleanups.push(facilitator.close)

    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const dataDir = mkdtempSync(join(tmpdir(), "repomarket-gone-"))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = serverEnv({ port, dataDir, githubUrl: github.url, facilitatorUrl: facilitator.url })
    const server = spawnedServer(ROOT, env, cleanups)
    const stop = await server.boot()

    // The attacker's free account: the sign-in link from the server's log (no SMTP_URL), then two listings
    // (its own repo, with updates; and, as another seller would, somebody else's).
    const session = await signIn(origin, "mallory@example.com", server.output)
    const list = async (owner: string, name: string) => {
      const listed = await postJson(`${origin}/repos`, { host_url: `https://github.com/${owner}/${name}`, price_usd: "0.75", wallet_base: BENCH_WALLET, updates_days: 30 }, session)
      if (listed.status !== 201) throw new Error(`listing ${name}: ${listed.status} ${listed.text}`)
      return JSON.parse(listed.text) as { checkout_url: string; test_checkout_url: string }
    }
    const own = await list("mallory", "gone")
    const honest = await list("honest", "tool")

    // Bought on the test twin (no money), then the repository deleted on GitHub.
    const bought = await fetchFrom(own.test_checkout_url, "127.0.0.2", { "payment-signature": await paymentFor(own.test_checkout_url, "127.0.0.2", "eip155:84532") })
    if (bought.status !== 200) throw new Error(`test-twin purchase: ${bought.status} ${bought.text}`)
    const receipt = receiptLink(bought)
    if (receipt === undefined) throw new Error("no receipt link")
    github.remove("mallory", "gone")
    await stop()
    await server.boot()

    section(`receipt requests of a deleted repository: server ${values.root === undefined ? "this checkout" : values.root} (${commitOf(ROOT)}), ${REQUESTS} requests each, each from another address`)
    const rows: Array<[string, string, string]> = []
    let client = 0
    const phase = async (name: string, url: string) => {
      const before = github.calls.length
      const statuses = new Map<number, number>()
      for (let i = 0; i < REQUESTS; i++) {
        client++
        const answer = await fetchFrom(url, `127.0.${10 + (client >> 8)}.${client & 255}`)
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
      }
      const calls = github.calls.length - before
      rows.push([name, [...statuses].map(([s, n]) => `${n} × ${s}`).join(", "), String(calls)])
      return calls
    }
    const total = (await phase("GET <receipt>/provenance", `${receipt}/provenance`)) +
      (await phase("GET <receipt>", receipt)) +
      (await phase("GET <receipt>/latest", `${receipt}/latest`))
    const honestBuy = await fetchFrom(honest.checkout_url, "127.0.0.3", { "payment-signature": await paymentFor(honest.checkout_url, "127.0.0.3", "eip155:8453") })

    console.log("  | requests | answers | GitHub calls |")
    console.log("  |---|---|---:|")
    for (const [name, answers, calls] of rows) console.log(`  | ${REQUESTS} × ${name} | ${answers} | ${calls} |`)
    console.log(`  GitHub calls per 100 receipt requests of the deleted repository: ${fmt((total * 100) / (3 * REQUESTS), 1)} (${total} for ${3 * REQUESTS})`)
    console.log(`  an honest buyer of another listing, paying live afterwards: ${honestBuy.status}${honestBuy.status === 200 ? " (goods)" : ` ${honestBuy.text.slice(0, 160)}`}`)
    console.log(`  done in ${fmt((performance.now() - started) / 1000, 1)} s`)
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
}

runMain(main)

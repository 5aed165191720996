/**
 * Receipt re-downloads of a listing whose archive is bigger than the 2 MiB the memory cache keeps (issue 33):
 * what one client, several clients and several receipts get, and what the code host sees. Not a test: nothing
 * here fails on a figure; it prints tables.
 *
 *   npx tsx bench/receipt-redownloads.ts [--mib 3] [--requests 60]
 *
 * The server is repomarket as `npm start` runs it (`tsx hosts/node/main.ts`, a child process on the embedded
 * database in a temporary DATA_DIR, so its archives are kept under that DATA_DIR/archives), with the GitHub
 * adapter pointed at a fake GitHub on loopback (test/support/fakeGithubServer.ts: the tarball endpoint answers
 * 302 to a codeload path that streams `--mib` MiB) and live payments through a loopback facilitator
 * (bench/support.ts) that checks each EIP-3009 signature. Each client is a loopback source address
 * (127.0.<phase>.<n>): the server sees it as the client's address, no proxy header involved. ARCHIVE_CACHE_BYTES
 * is passed through from the environment (unset: the server's default).
 *
 * Phases, each on receipts of its own (every receipt is a live purchase by a new wallet):
 *   A. one receipt link requested `--requests` times in a row from one address;
 *   B. one receipt requested from 6 addresses, 5 times each, in turn;
 *   C. one address holding 4 receipts requests each 10 times;
 *   D. that address, at its re-download limit, buys once more: the purchase (the first download), then a
 *      re-download from it and one from another address;
 *   E. phase A's address buys a second listing's receipt and re-downloads it once;
 *   F. 4 addresses request one fresh receipt at the same moment.
 * Counted: answers by status (429 with its Retry-After), requests the fake GitHub saw (archive requests:
 * the tarball endpoint's redirect and codeload's download; other API requests apart), and the time of each
 * download to its last byte, split by where the archive came from (the code host, when the fake GitHub saw
 * an archive request during it; else kept by the server).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { parseArgs } from "node:util"
import { startFakeGithubServer } from "../test/support/fakeGithubServer.js"
import { type Answer, fetchFrom, paymentFor, postJson, receiptLink, serverEnv, signIn, spawnedServer } from "./spawnedServer.js"
import { BENCH_WALLET, fmt, freePort, median, ms, runMain, section, startLoopbackFacilitator, startWatchdog, teardown } from "./support.js"

const { values } = parseArgs({
  options: {
    mib: { type: "string", default: "3" },
    requests: { type: "string", default: "60" }
  }
})
const MIB = Number(values.mib)
const REQUESTS = Number.parseInt(values.requests, 10)
if (!(MIB > 0 && MIB <= 512 && REQUESTS > 0 && REQUESTS <= 1000)) {
  console.error("--mib must be a number from 0 (excluded) to 512, --requests a whole number from 1 to 1000")
  process.exit(2)
}
startWatchdog(600)

const ROOT = join(import.meta.dirname, "..")
const SHA = "0123456789abcdef0123456789abcdef01234567"
const ARCHIVE_BYTES = Math.round(MIB * 1024 * 1024)
/** The limits as documented (README, domain/usecases/Redownloads.ts): what the run is read against. */
const DOCUMENTED = "10 re-downloads per receipt an hour, 30 per client address an hour, 2 at once per receipt (429 + Retry-After)"

/** The archive's bytes, made once: printable noise (nothing checks that it is gzip). */
const ARCHIVE = (() => {
  const b = Buffer.alloc(ARCHIVE_BYTES)
  for (let i = 0; i < b.length; i++) b[i] = (i * 31 + 7) % 251
  return b
})()
const chunks = function*() {
  for (let at = 0; at < ARCHIVE.length; at += 64 * 1024) yield ARCHIVE.subarray(at, at + 64 * 1024)
}
const repo = (name: string) => ({
  owner: "bench",
  name,
  sha: SHA,
  description: `bench repo, ${MIB} MiB archive`,
  files: { "README.md": `# ${name}\n` },
  tarball: () => Readable.from(chunks())
})

interface Download extends Answer {
  /** Archive requests the fake GitHub saw while this one ran (tarball redirect + codeload). */
  readonly archiveRequests: number
}

const main = async () => {
  const started = performance.now()
  const cleanups: Array<() => unknown> = []
  try {
    const github = await startFakeGithubServer([repo("big-one"), repo("big-two"), repo("warm-up")])
    cleanups.push(github.close)
    const facilitator = await startLoopbackFacilitator(["eip155:8453"])
    cleanups.push(facilitator.close)
    const isArchive = (path: string) => /\/tarball\/|^\/codeload\//.test(path)
    const archiveRequests = () => github.calls.filter((c) => isArchive(c.path)).length
    const otherRequests = () => github.calls.filter((c) => !isArchive(c.path)).length

    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const dataDir = mkdtempSync(join(tmpdir(), "repomarket-receipts-"))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = serverEnv({ port, dataDir, githubUrl: github.url, facilitatorUrl: facilitator.url })
    if (process.env.ARCHIVE_CACHE_BYTES !== undefined) env.ARCHIVE_CACHE_BYTES = process.env.ARCHIVE_CACHE_BYTES
    const server = spawnedServer(ROOT, env, cleanups)
    const bootStarted = performance.now()
    await server.boot()

    // A seller: the sign-in link from the server's log (no SMTP_URL), an access token, three listings.
    const session = await signIn(origin, "bench-receipts@example.com", server.output)
    const list = async (name: string) => {
      const listed = await postJson(`${origin}/repos`, { host_url: `https://github.com/bench/${name}`, price_usd: "0.75", wallet_base: BENCH_WALLET }, session)
      if (listed.status !== 201) throw new Error(`listing ${name}: ${listed.status} ${listed.text}`)
      return JSON.parse(listed.text).checkout_url as string
    }
    const checkout = await list("big-one")
    const otherCheckout = await list("big-two")
    const warmCheckout = await list("warm-up")

    const tracked = async (url: string, client: string, headers: Record<string, string> = {}): Promise<Download> => {
      const before = archiveRequests()
      const answer = await fetchFrom(url, client, headers)
      return { ...answer, archiveRequests: archiveRequests() - before }
    }
    const purchases: Array<Download> = []
    /** A live purchase by a new wallet from `client`: the answer and its receipt link. */
    const buy = async (client: string, url = checkout) => {
      const header = await paymentFor(url, client)
      const bought = await tracked(url, client, { "payment-signature": header })
      purchases.push(bought)
      const receipt = receiptLink(bought)
      return { bought, receipt }
    }

    const redownloads: Array<Download> = []
    const statusOf = (d: Answer) => (d.status === 200 && d.bytes !== ARCHIVE_BYTES ? `200 (${d.bytes} of ${ARCHIVE_BYTES} bytes)` : String(d.status))
    const tally = (ds: ReadonlyArray<Download>) => {
      const by = new Map<string, number>()
      for (const d of ds) by.set(statusOf(d), (by.get(statusOf(d)) ?? 0) + 1)
      const retry = ds.filter((d) => d.status === 429).map((d) => Number(d.headers["retry-after"]))
      const retryText = retry.length === 0 ? "" : ` (Retry-After ${Math.min(...retry)}${Math.max(...retry) !== Math.min(...retry) ? `–${Math.max(...retry)}` : ""} s)`
      return [...by].map(([s, n]) => `${n} × ${s}${s === "429" ? retryText : ""}`).join(", ")
    }
    /** The first position of each run of equal statuses: `1–10: 200, 11–60: 429`. */
    const runs = (ds: ReadonlyArray<Download>) => {
      const parts: Array<string> = []
      let from = 0
      for (let i = 1; i <= ds.length; i++) {
        if (i === ds.length || statusOf(ds[i]!) !== statusOf(ds[from]!)) {
          parts.push(`${from + 1 === i ? i : `${from + 1}–${i}`}: ${statusOf(ds[from]!)}`)
          from = i
        }
      }
      return parts.join(", ")
    }
    const rows: Array<{ phase: string; answers: string; archive: number; other: number }> = []
    /** Runs a phase; `run` answers what its requests were answered. */
    const phase = async (name: string, run: () => Promise<string>) => {
      const a0 = archiveRequests()
      const o0 = otherRequests()
      const answers = await run()
      const row = { phase: name, answers, archive: archiveRequests() - a0, other: otherRequests() - o0 }
      rows.push(row)
      console.log(`  ${row.phase}: ${answers}; code-host archive requests ${row.archive}, other code-host requests ${row.other}`)
    }
    const receiptOf = (receipt: string | undefined) => {
      if (receipt === undefined) throw new Error("a purchase answered without a receipt link")
      return receipt
    }

    // Warm-up, not counted: one purchase and one re-download of a third listing of the same size (the first
    // request down each path compiles it; without this the first purchase would measure that, not the code host).
    const warm = await fetchFrom(warmCheckout, "127.0.9.1", { "payment-signature": await paymentFor(warmCheckout, "127.0.9.1") })
    const warmReceipt = receiptLink(warm)
    if (warm.status !== 200 || warmReceipt === undefined) throw new Error(`warm-up purchase: ${warm.status} ${warm.text}`)
    await fetchFrom(warmReceipt, "127.0.9.1")
    const setupArchive = archiveRequests()
    const setupOther = otherRequests()

    section(`receipt re-downloads: ${MIB} MiB archive (${fmt(ARCHIVE_BYTES)} bytes), ${REQUESTS} requests in a row`)
    console.log(`  ${new Date().toISOString()}, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    console.log(`  server: tsx ${server.flags.join(" ")} hosts/node/main.ts on PGlite in a temporary DATA_DIR; ARCHIVE_CACHE_BYTES=${process.env.ARCHIVE_CACHE_BYTES ?? "unset (server default)"}; started in ${fmt((performance.now() - bootStarted) / 1000, 1)} s`)
    console.log(`  documented limits: ${DOCUMENTED}`)

    // A. One receipt link, N times in a row, one address.
    const phaseA: Array<Download> = []
    await phase(`A. one receipt, ${REQUESTS} requests in a row from one address`, async () => {
      const { bought, receipt } = await buy("127.0.1.1")
      const link = receiptOf(receipt)
      for (let i = 0; i < REQUESTS; i++) phaseA.push(await tracked(link, "127.0.1.1"))
      redownloads.push(...phaseA)
      return `purchase ${statusOf(bought)}; re-downloads ${tally(phaseA)} [${runs(phaseA)}]`
    })

    // B. One receipt, 6 addresses in turn, 5 requests each.
    await phase("B. one receipt, 6 addresses × 5 requests in turn", async () => {
      const { receipt } = await buy("127.0.2.1")
      const link = receiptOf(receipt)
      const ds: Array<Download> = []
      for (let round = 0; round < 5; round++) {
        for (let n = 1; n <= 6; n++) ds.push(await tracked(link, `127.0.2.${n}`))
      }
      redownloads.push(...ds)
      return `${tally(ds)} [${runs(ds)}]`
    })

    // C. One address, 4 receipts, 10 requests each.
    await phase("C. one address, 4 receipts × 10 requests", async () => {
      const links: Array<string> = []
      for (let r = 0; r < 4; r++) links.push(receiptOf((await buy("127.0.3.1")).receipt))
      const ds: Array<Download> = []
      for (const link of links) for (let i = 0; i < 10; i++) ds.push(await tracked(link, "127.0.3.1"))
      redownloads.push(...ds)
      return `4 purchases; re-downloads ${tally(ds)} [${runs(ds)}]`
    })

    // D. That address, at its limit, buys once more.
    await phase("D. phase C's address, at its limit, buys again", async () => {
      const { bought, receipt } = await buy("127.0.3.1")
      const link = receiptOf(receipt)
      const own = await tracked(link, "127.0.3.1")
      const other = await tracked(link, "127.0.3.2")
      redownloads.push(own, other)
      return `purchase ${statusOf(bought)}; its re-download from the same address ${tally([own])}, from another address ${tally([other])}`
    })

    // E. Phase A's address, another listing.
    await phase("E. phase A's address buys another listing, re-downloads once", async () => {
      const { bought, receipt } = await buy("127.0.1.1", otherCheckout)
      const own = await tracked(receiptOf(receipt), "127.0.1.1")
      redownloads.push(own)
      const served = phaseA.filter((d) => d.status === 200).length
      return `purchase ${statusOf(bought)}; its re-download ${tally([own])} (phase A had ${served} re-downloads served to this address)`
    })

    // F. 4 addresses at the same moment on one fresh receipt.
    await phase("F. one fresh receipt, 4 addresses at the same moment", async () => {
      const { receipt } = await buy("127.0.4.1")
      const link = receiptOf(receipt)
      const ds = await Promise.all([1, 2, 3, 4].map((n) => tracked(link, `127.0.4.${n}`)))
      return tally(ds)
    })

    // Times: sequential downloads only (phase F overlaps), by where the archive came from.
    section("time of a download to its last byte")
    const ok = (ds: ReadonlyArray<Download>) => ds.filter((d) => d.status === 200 && d.bytes === ARCHIVE_BYTES)
    const fromHost = (ds: ReadonlyArray<Download>) => ok(ds).filter((d) => d.archiveRequests > 0)
    const kept = (ds: ReadonlyArray<Download>) => ok(ds).filter((d) => d.archiveRequests === 0)
    const line = (label: string, ds: ReadonlyArray<Download>) => {
      const t = ds.map((d) => d.ms).sort((a, b) => a - b)
      console.log(`  ${label.padEnd(58)} ${String(t.length).padStart(3)}  ${t.length === 0 ? "-" : `p50 ${ms(median(t))}  max ${ms(t.at(-1)!)}`}`)
      return t.length === 0 ? undefined : median(t)
    }
    const sequentialPurchases = purchases.slice(0, -1)
    const firstPurchase = line("purchase, archive from the code host (after a warm-up)", fromHost(sequentialPurchases))
    line("purchase, archive kept by the server", kept(sequentialPurchases))
    const hostRe = line("re-download, archive from the code host", fromHost(redownloads))
    const keptRe = line("re-download, archive kept by the server", kept(redownloads))
    const refused = redownloads.filter((d) => d.status === 429).map((d) => d.ms)
    if (refused.length > 0) console.log(`  ${"re-download refused (429)".padEnd(58)} ${String(refused.length).padStart(3)}  p50 ${ms(median(refused))}  max ${ms(Math.max(...refused))}`)
    console.log(`  purchases in order (ms, where the archive came from): ${purchases.map((d) => `${fmt(d.ms)} ${d.archiveRequests > 0 ? "code host" : "kept"}`).join(", ")}`)
    const re = keptRe ?? hostRe
    if (re !== undefined && firstPurchase !== undefined) {
      console.log(`  re-download p50 / the purchase that fetched the archive from the code host: ${fmt(re / firstPurchase, 2)}x`)
    }

    section("summary")
    console.log("  | phase | answers | code-host archive requests | other code-host requests |")
    console.log("  |---|---|---:|---:|")
    for (const r of rows) console.log(`  | ${r.phase} | ${r.answers} | ${r.archive} | ${r.other} |`)
    console.log(`  | all phases (${purchases.length} purchases, ${redownloads.length + 4} re-download requests) | | ${archiveRequests() - setupArchive} | ${otherRequests() - setupOther} |`)
    console.log(`  (before the phases, listing 3 repos and the warm-up purchase cost ${setupOther} other and ${setupArchive} archive requests; archive requests`)
    console.log(`   are the tarball endpoint's 302 and codeload's download: 2 per archive fetched; load average now ${loadavg().map((l) => l.toFixed(2)).join(" ")})`)
  } finally {
    await teardown(cleanups, started)
  }
}

runMain(main)

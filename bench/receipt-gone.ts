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
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { startFakeGithubServer } from "../test/support/fakeGithubServer.js"
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
const sleep = (n: number) => new Promise((r) => setTimeout(r, n))
/** The node flags `npm start` gives the server (package.json), so the server here runs as it does there. */
const START_FLAGS = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start as string)
  .split(/\s+/).filter((arg) => arg.startsWith("--"))
const commitOf = (dir: string) => {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
}

/** A GET from a given loopback source address: the server sees it as that client. */
const fetchFrom = (url: string, client: string, headers: Record<string, string> = {}) =>
  new Promise<Answer>((done) => {
    const req = request(url, { localAddress: client, agent: false, headers }, (res) => {
      const head: Array<Buffer> = []
      let size = 0
      res.on("data", (c: Buffer) => {
        if (size < 4096) head.push(c)
        size += c.length
      })
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(head).toString("utf8").slice(0, 4096) }))
      res.on("error", () => done({ status: -1, headers: res.headers, text: "" }))
    })
    req.on("error", (e) => done({ status: 0, headers: {}, text: e.message }))
    req.end()
  })

const postJson = async (url: string, body: unknown, token?: string) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  return { status: res.status, text: await res.text() }
}

const transferWithAuthorization = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" }
  ]
} as const

/** A PAYMENT-SIGNATURE for `checkoutUrl` on `network` by a new wallet, as the official client signs (EIP-3009, x402 v2). */
const paymentFor = async (checkoutUrl: string, client: string, network: "eip155:8453" | "eip155:84532") => {
  const offer = await fetchFrom(checkoutUrl, client)
  if (offer.status !== 402) throw new Error(`${checkoutUrl}: expected 402, got ${offer.status} ${offer.text}`)
  const required = JSON.parse(Buffer.from(String(offer.headers["payment-required"]), "base64").toString("utf8"))
  const accepted = required.accepts.find((a: { network: string }) => a.network === network)
  const buyer = privateKeyToAccount(generatePrivateKey())
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 600)
  const message = {
    from: buyer.address,
    to: accepted.payTo as Hex,
    value: BigInt(accepted.amount),
    validAfter: 0n,
    validBefore,
    nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex
  }
  const chainId = Number(network.split(":")[1])
  const domain = { name: accepted.extra.name, version: accepted.extra.version, chainId, verifyingContract: accepted.asset as Hex }
  const signature = await buyer.signTypedData({ domain, types: transferWithAuthorization, primaryType: "TransferWithAuthorization", message })
  const payload = { signature, authorization: { ...message, value: String(message.value), validAfter: "0", validBefore: String(validBefore) } }
  return Buffer.from(JSON.stringify({ x402Version: 2, resource: required.resource, accepted, payload })).toString("base64")
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
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      PORT: String(port),
      BASE_URL: origin,
      DATA_DIR: dataDir,
      GITHUB_API_URL: github.url,
      X402_FACILITATOR_URL: facilitator.url,
      BASE_RPC_URL: "off",
      SOLANA_RPC_URL: "off",
      LOG_LEVEL: "WARN"
    }
    let output = ""
    /** Starts the server; answers a function that stops it (and waits until it has exited). */
    const boot = async () => {
      const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [...START_FLAGS, "hosts/node/main.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
      child.stdout!.on("data", (c) => (output += c))
      child.stderr!.on("data", (c) => (output += c))
      const kill = () => {
        try {
          process.kill(-child.pid!, "SIGKILL")
        } catch {
          // gone already
        }
      }
      cleanups.push(kill)
      const t0 = performance.now()
      for (;;) {
        const ok = await fetch(`${origin}/healthz`).then((r) => r.status === 200, () => false)
        if (ok) break
        if (child.exitCode !== null || performance.now() - t0 > 180_000) throw new Error(`the server did not start:\n${output}`)
        await sleep(200)
      }
      return async () => {
        kill()
        while (child.exitCode === null && child.signalCode === null) await sleep(50)
      }
    }
    const stop = await boot()

    // The attacker's free account: the sign-in link from the server's log (no SMTP_URL), then two listings
    // (its own repo, with updates; and, as another seller would, somebody else's).
    const asked = await postJson(`${origin}/auth/magic-link`, { email: "mallory@example.com" })
    if (asked.status !== 202) throw new Error(`magic link: ${asked.status} ${asked.text}`)
    let link = ""
    for (let waited = 0; link === ""; waited += 50) {
      const match = /\/auth\/verify\?token=([A-Za-z0-9_-]+)/.exec(output)
      if (match) link = match[1]!
      else if (waited > 15_000) throw new Error(`no sign-in link in the server's log:\n${output}`)
      else await sleep(50)
    }
    const verified = await postJson(`${origin}/auth/verify`, { token: link })
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`)
    const session = JSON.parse(verified.text).access_token as string
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
    const receipt = /^<([^>]+)>; rel="receipt"$/.exec(String(bought.headers["link"] ?? ""))?.[1]
    if (receipt === undefined) throw new Error("no receipt link")
    github.remove("mallory", "gone")
    await stop()
    await boot()

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

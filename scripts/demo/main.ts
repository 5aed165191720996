/*
 * `npm run demo`: the marketplace working on this machine alone — no network, no GitHub token, no SMTP, no
 * wallet. It uses the package as an embedder would, through its entry points (`repomarket/http`'s
 * startNodeServer over `repomarket/testing`'s memoryPorts): a memory code host serves the sample repositories of
 * repos.ts in place of GitHub, storage is in memory, sign-in links are written to this output, and payments go to the test twin (simulated USDC). It
 * starts the server, lists the samples, buys one with examples/buy.mjs (the official x402 client and a fresh
 * wallet) and leaves the archive on disk, printing each step; then it serves until stopped. `--once` stops it
 * after the purchase (tests, CI); `--no-buy` skips the purchase. PORT is taken as `npm start` takes it (a wrong
 * value or a port in use is one line naming PORT); DEMO_DIR is where the archive goes (default `.data/demo`).
 */
import { spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Layer, Logger } from "effect"
import { type RunningNodeServer, startNodeServer } from "../../entry/http.js"
import { memoryPorts } from "../../entry/testing.js"
import { listenProblem, portFromEnv, portProblemLine } from "../../hosts/node/StartChecks.js"
import { Mailer } from "../../index.js"
import { DEMO_REPOS, DEMO_WALLETS } from "./repos.js"

const ROOT = resolve(import.meta.dirname, "../..")
const once = process.argv.includes("--once")
const buy = !process.argv.includes("--no-buy")
const say = (line: string) => void process.stdout.write(`${line}\n`)
const refuse = (line: string): never => {
  process.stderr.write(`${line}\n`)
  process.exit(1)
}

let port: number
try {
  port = portFromEnv()
} catch (e) {
  port = refuse((e as Error).message)
}
const taken = await listenProblem(port)
if (taken !== null) refuse(portProblemLine("PORT", port, taken))

/** Sign-in links are written to this output (there is no mail server), and whoever asks is told so. */
const MailToThisOutput = Layer.succeed(Mailer, {
  delivery: "log",
  send: (mail) =>
    Effect.sync(() => say(`sign-in link for ${mail.to}: ${/https?:\/\/\S+\/auth\/verify\?\S+/.exec(mail.text)?.[0] ?? mail.text}`))
})

let server: RunningNodeServer
try {
  // The access log as `npm start` writes it (the pretty logger), one line a request.
  const ports = Layer.mergeAll(memoryPorts({ repos: DEMO_REPOS.map((d) => d.repo) }), MailToThisOutput, Logger.pretty)
  server = await startNodeServer(ports, { port })
} catch (e) {
  server = refuse(`demo: the server did not start: ${e instanceof Error ? e.message : String(e)}`)
}
const stop = async (code: number) => {
  await server.close()
  process.exit(code)
}
process.once("SIGINT", () => void stop(0))
process.once("SIGTERM", () => void stop(0))

// The seller: lists every sample anonymously, paid to the demo wallets.
const listed: Array<{ readonly name: string; readonly priceUsd: string; readonly page: string; readonly test_checkout_url: string }> = []
for (const { priceUsd, repo } of DEMO_REPOS) {
  const name = `${repo.owner}/${repo.name}`
  const res = await fetch(`${server.url}/repos`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ host_url: `https://github.com/${name}`, price_usd: priceUsd, wallet_base: DEMO_WALLETS.base, wallet_solana: DEMO_WALLETS.solana })
  })
  const body = (await res.json()) as { page: string; test_checkout_url: string }
  if (res.status !== 201) {
    say(`demo: listing ${name} failed: ${res.status} ${JSON.stringify(body)}`)
    await stop(1)
  }
  listed.push({ name, priceUsd, ...body })
}

const width = Math.max(...listed.map((l) => l.name.length))
say([
  `repomarket demo is answering on ${server.url} (nothing here reaches the network)`,
  `  code host  a built-in stand-in for GitHub with ${listed.length} sample repositories (no GitHub, no token)`,
  "  database   in memory: gone when the demo stops",
  "  mail       none: sign-in links are written to this output",
  "  payments   test twin only: simulated USDC, nothing real is paid",
  ...listed.map((l, i) => `  ${i === 0 ? "listed   " : "         "}  ${l.name.padEnd(width)}  $${l.priceUsd.padStart(6)}  ${server.url}${l.page}`)
].join("\n"))

if (buy) {
  const first = listed[0]!
  const directory = resolve(process.env["DEMO_DIR"] ?? join(ROOT, ".data", "demo"))
  mkdirSync(directory, { recursive: true })
  say(`\nbuying ${first.name} on its test checkout: node examples/buy.mjs ${first.test_checkout_url}`)
  const code = await new Promise<number | null>((done) => {
    const child = spawn(process.execPath, [join(ROOT, "examples", "buy.mjs"), first.test_checkout_url, directory], { stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.on("data", (chunk: Buffer) => process.stdout.write(chunk.toString("utf8").replace(/^(?=.)/gm, "  ")))
    child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk))
    child.on("exit", done)
  })
  if (code !== 0) {
    say("demo: the purchase failed (above)")
    await stop(1)
  }
}

if (once) await stop(0)
say(`\nopen ${server.url}/ in a browser (a repo page's "Rehearse with simulated money" buys on the test twin),`)
say(`or buy another: node examples/buy.mjs ${listed.at(-1)!.test_checkout_url}`)
say("Ctrl-C stops the demo.")

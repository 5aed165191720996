/**
 * What the benches that run repomarket as `npm start` runs it share (bench/receipt-gone.ts,
 * bench/receipt-redownloads.ts): the server as a child process on loopback, a seller's sign-in through the link
 * in its log, GETs from a given loopback source address (the server sees it as that client, no proxy header
 * involved), and live payments by a new wallet, signed as the official client signs (EIP-3009, x402 v2).
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { authorizationTypes } from "@x402/evm"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

export const sleep = (n: number) => new Promise((r) => setTimeout(r, n))

/** The node flags `npm start` gives the server (`root`'s package.json), so the server here runs as it does there. */
export const startFlags = (root: string) =>
  (JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start as string)
    .split(/\s+/).filter((arg) => arg.startsWith("--"))

/** The server's environment: on loopback `port`, its data in `dataDir`, GitHub and the x402 facilitator at the given URLs. */
export const serverEnv = (options: { readonly port: number; readonly dataDir: string; readonly githubUrl: string; readonly facilitatorUrl: string }): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  PORT: String(options.port),
  BASE_URL: `http://127.0.0.1:${options.port}`,
  DATA_DIR: options.dataDir,
  GITHUB_API_URL: options.githubUrl,
  X402_FACILITATOR_URL: options.facilitatorUrl,
  BASE_RPC_URL: "off",
  SOLANA_RPC_URL: "off",
  LOG_LEVEL: "WARN"
})

/**
 * The server as `npm start` runs it (`tsx hosts/node/main.ts` with the flags of `root`'s package.json), from the
 * checkout `root`, on `env` (its BASE_URL is where it is asked for /healthz). `boot` starts it (again: a restart on
 * the same DATA_DIR), waits until it answers, pushes its kill onto `cleanups` and answers a function that stops it
 * (and waits until it has exited). `output` is everything every start has written so far.
 */
export const spawnedServer = (root: string, env: Record<string, string>, cleanups: Array<() => unknown>) => {
  const flags = startFlags(root)
  let output = ""
  const boot = async () => {
    const child = spawn(join(root, "node_modules/.bin/tsx"), [...flags, "hosts/node/main.ts"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
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
      const ok = await fetch(`${env.BASE_URL}/healthz`).then((r) => r.status === 200, () => false)
      if (ok) break
      if (child.exitCode !== null || performance.now() - t0 > 180_000) throw new Error(`the server did not start:\n${output}`)
      await sleep(200)
    }
    return async () => {
      kill()
      while (child.exitCode === null && child.signalCode === null) await sleep(50)
    }
  }
  return { flags, boot, output: () => output }
}

export const postJson = async (url: string, body: unknown, token?: string) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  return { status: res.status, text: await res.text() }
}

/** A seller's access token: a sign-in link for `email`, read from the server's log (no SMTP_URL), then verified. */
export const signIn = async (origin: string, email: string, output: () => string) => {
  const asked = await postJson(`${origin}/auth/magic-link`, { email })
  if (asked.status !== 202) throw new Error(`magic link: ${asked.status} ${asked.text}`)
  let token = ""
  for (let waited = 0; token === ""; waited += 50) {
    const match = /\/auth\/verify\?token=([A-Za-z0-9_-]+)/.exec(output())
    if (match) token = match[1]!
    else if (waited > 15_000) throw new Error(`no sign-in link in the server's log:\n${output()}`)
    else await sleep(50)
  }
  const verified = await postJson(`${origin}/auth/verify`, { token })
  if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`)
  return JSON.parse(verified.text).access_token as string
}

export interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The body's length; `text` is its first 4096 bytes at most. */
  readonly bytes: number
  readonly text: string
  /** From the request to the body's last byte. */
  readonly ms: number
}

/** A GET from a given loopback source address: the server sees it as that client. */
export const fetchFrom = (url: string, client: string, headers: Record<string, string> = {}) =>
  new Promise<Answer>((resolve) => {
    const t0 = performance.now()
    const req = request(url, { localAddress: client, agent: false, headers }, (res) => {
      let bytes = 0
      const head: Array<Buffer> = []
      res.on("data", (c: Buffer) => {
        if (bytes < 4096) head.push(c)
        bytes += c.length
      })
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text: Buffer.concat(head).toString("utf8").slice(0, 4096), ms: performance.now() - t0 }))
      res.on("error", () => resolve({ status: -1, headers: res.headers, bytes, text: "", ms: performance.now() - t0 }))
    })
    req.on("error", (e) => resolve({ status: 0, headers: {}, bytes: 0, text: e.message, ms: performance.now() - t0 }))
    req.end()
  })

/** The receipt link a purchase answered (its `Link: <…>; rel="receipt"`), if any. */
export const receiptLink = (answer: Answer) => /^<([^>]+)>; rel="receipt"$/.exec(String(answer.headers["link"] ?? ""))?.[1]

/** A PAYMENT-SIGNATURE for `checkoutUrl` on `network` by a new wallet, as the official client signs (EIP-3009, x402 v2). */
export const paymentFor = async (checkoutUrl: string, client: string, network: "eip155:8453" | "eip155:84532" = "eip155:8453") => {
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
  const signature = await buyer.signTypedData({ domain, types: authorizationTypes, primaryType: "TransferWithAuthorization", message })
  const payload = { signature, authorization: { ...message, value: String(message.value), validAfter: "0", validBefore: String(validBefore) } }
  return Buffer.from(JSON.stringify({ x402Version: 2, resource: required.resource, accepted, payload })).toString("base64")
}

/**
 * The load generator of bench/checkout.ts and bench/repo-page.ts, in its own process (forked by them) so that
 * firing requests and reading bodies does not share the server's event loop. Driven by messages; answers each
 * with one message.
 *
 * - `sign`: pre-signs distinct EIP-3009 payments (viem, random nonces, a handful of buyer keys) for given
 *   x402 v2 requirements and keeps them as PAYMENT-SIGNATURE headers.
 * - `challenge`: autocannon GET without a payment header, expecting 402.
 * - `load`: autocannon GET with the given request headers, expecting the given status.
 * - `purchase`: fires the pre-signed payments of one set with bounded concurrency, reading every body.
 */
import { Agent, get } from "node:http"
import { gunzipSync } from "node:zlib"
import autocannon from "autocannon"
import type { Hex } from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { transferWithAuthorizationTypes } from "../adapters/evm/EvmPayment.js"
import type { RequirementV2 } from "../codec/Wire.js"

/** One x402 v2 requirement as it is on the wire (an `accepts` entry of PAYMENT-REQUIRED). */
export type WireRequirement = RequirementV2

export interface SignJob {
  readonly set: string
  readonly count: number
  readonly accepted: WireRequirement
  readonly resource: unknown
}

export interface ChallengeStats {
  readonly requests: number
  readonly seconds: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly statusCounts: Readonly<Record<string, number>>
  /** Answers other than 402, plus socket errors and timeouts. */
  readonly non402: number
}

export interface LoadStats {
  readonly requests: number
  readonly seconds: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly statusCounts: Readonly<Record<string, number>>
  readonly expectedStatus: number
  /** Answers other than `expectedStatus`, plus socket errors and timeouts. */
  readonly unexpected: number
  readonly errors: number
  readonly timeouts: number
  /** Bytes read from the server (status lines, headers and bodies). */
  readonly bytes: number
}

export interface PurchaseStats {
  readonly attempted: number
  readonly ok: number
  readonly failed: number
  readonly statusCounts: Readonly<Record<string, number>>
  readonly firstFailure: string | null
  readonly seconds: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly bytes: number
}

export type Request =
  | { readonly type: "sign"; readonly jobs: ReadonlyArray<SignJob>; readonly buyers: number; readonly maxSeconds: number }
  | { readonly type: "challenge"; readonly url: string; readonly connections: number; readonly seconds: number }
  | {
    readonly type: "load"
    readonly url: string
    readonly connections: number
    readonly seconds: number
    readonly expectedStatus: number
    readonly headers: Readonly<Record<string, string>>
  }
  | {
    readonly type: "purchase"
    readonly url: string
    readonly set: string
    readonly concurrency: number
    readonly maxSeconds: number
    /** "test": a gzip holding MANIFEST.json; "bytes": exactly this many body bytes. */
    readonly expect: { readonly kind: "test" } | { readonly kind: "bytes"; readonly bytes: number }
  }
  | { readonly type: "exit" }

export type Reply =
  | { readonly type: "signed"; readonly counts: Readonly<Record<string, number>>; readonly seconds: number }
  | { readonly type: "challenge"; readonly stats: ChallengeStats }
  | { readonly type: "load"; readonly stats: LoadStats }
  | { readonly type: "purchase"; readonly stats: PurchaseStats }
  | { readonly type: "error"; readonly message: string }

const headers = new Map<string, Array<string>>()

const randomNonce = (): Hex => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`

const sign = async (jobs: ReadonlyArray<SignJob>, buyers: number, maxSeconds: number) => {
  const started = performance.now()
  const deadline = started + maxSeconds * 1000
  const accounts: Array<PrivateKeyAccount> = Array.from({ length: buyers }, () => privateKeyToAccount(generatePrivateKey()))
  const now = Math.floor(Date.now() / 1000)
  const counts: Record<string, number> = {}
  // Round-robin over the jobs so a time limit cuts every set alike.
  const lists = jobs.map((job) => {
    const list: Array<string> = []
    headers.set(job.set, list)
    return { job, list }
  })
  let i = 0
  while (performance.now() < deadline && lists.some(({ job, list }) => list.length < job.count)) {
    for (const { job, list } of lists) {
      if (list.length >= job.count) continue
      const buyer = accounts[i++ % accounts.length]!
      const { accepted } = job
      const authorization = {
        from: buyer.address,
        to: accepted.payTo as Hex,
        value: BigInt(accepted.amount),
        validAfter: BigInt(now - 60),
        validBefore: BigInt(now + 3600),
        nonce: randomNonce()
      }
      const signature = await buyer.signTypedData({
        domain: {
          name: accepted.extra["name"]!,
          version: accepted.extra["version"]!,
          chainId: Number(accepted.network.split(":")[1]),
          verifyingContract: accepted.asset as Hex
        },
        types: transferWithAuthorizationTypes,
        primaryType: "TransferWithAuthorization",
        message: authorization
      })
      const payment = {
        x402Version: 2,
        resource: job.resource,
        accepted,
        payload: {
          signature,
          authorization: {
            ...authorization,
            value: authorization.value.toString(),
            validAfter: authorization.validAfter.toString(),
            validBefore: authorization.validBefore.toString()
          }
        }
      }
      list.push(Buffer.from(JSON.stringify(payment), "utf8").toString("base64"))
    }
  }
  for (const { job, list } of lists) counts[job.set] = list.length
  return { counts, seconds: (performance.now() - started) / 1000 }
}

const load = async (request: Omit<Extract<Request, { type: "load" }>, "type">): Promise<LoadStats> => {
  const { url, connections, seconds, expectedStatus, headers } = request
  const result = await autocannon({ url, connections, duration: seconds, timeout: 10, headers })
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]))
  const requests = Object.values(statusCounts).reduce((a, b) => a + b, 0)
  return {
    requests,
    seconds: result.duration,
    perSecond: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statusCounts,
    expectedStatus,
    unexpected: requests - (statusCounts[String(expectedStatus)] ?? 0) + result.errors + result.timeouts,
    errors: result.errors,
    timeouts: result.timeouts,
    bytes: result.throughput.total
  }
}

const challenge = async (url: string, connections: number, seconds: number): Promise<ChallengeStats> => {
  const { requests, seconds: duration, perSecond, p50, p99, statusCounts, unexpected } = await load({ url, connections, seconds, expectedStatus: 402, headers: {} })
  return { requests, seconds: duration, perSecond, p50, p99, statusCounts, non402: unexpected }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

interface Answer {
  readonly status: number
  readonly body: Buffer
  readonly paymentResponse: string | undefined
}

const fetchOnce = (url: string, agent: Agent, payment: string) =>
  new Promise<Answer>((resolve, reject) => {
    const req = get(url, { agent, headers: { "payment-signature": payment }, timeout: 30_000 }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const pr = res.headers["payment-response"]
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), paymentResponse: Array.isArray(pr) ? pr[0] : pr })
      })
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(new Error("timed out after 30 s")))
    req.on("error", reject)
  })

/** Why a 200 is not the goods we paid for, or null. */
const problemWith = (answer: Answer, expect: Extract<Request, { type: "purchase" }>["expect"]): string | null => {
  if (answer.status !== 200) return `status ${answer.status}: ${answer.body.subarray(0, 300).toString("utf8")}`
  if (answer.paymentResponse === undefined) return "no PAYMENT-RESPONSE header"
  const receipt = JSON.parse(Buffer.from(answer.paymentResponse, "base64").toString("utf8"))
  if (receipt.success !== true) return `PAYMENT-RESPONSE not a success: ${JSON.stringify(receipt)}`
  if (expect.kind === "bytes") {
    return answer.body.length === expect.bytes ? null : `body of ${answer.body.length} bytes, expected ${expect.bytes}`
  }
  return gunzipSync(answer.body).includes("MANIFEST.json") ? null : "the test goods hold no MANIFEST.json"
}

const purchase = async (request: Extract<Request, { type: "purchase" }>): Promise<PurchaseStats> => {
  const list = headers.get(request.set) ?? []
  const agent = new Agent({ keepAlive: true, maxSockets: request.concurrency })
  const latencies: Array<number> = []
  const statusCounts: Record<string, number> = {}
  let next = 0
  let ok = 0
  let failed = 0
  let bytes = 0
  let firstFailure: string | null = null
  const started = performance.now()
  const deadline = started + request.maxSeconds * 1000
  const lane = async () => {
    while (next < list.length && performance.now() < deadline) {
      const payment = list[next++]!
      const t0 = performance.now()
      try {
        const answer = await fetchOnce(request.url, agent, payment)
        latencies.push(performance.now() - t0)
        statusCounts[answer.status] = (statusCounts[answer.status] ?? 0) + 1
        bytes += answer.body.length
        const problem = problemWith(answer, request.expect)
        if (problem === null) ok++
        else {
          failed++
          firstFailure ??= problem
        }
      } catch (e) {
        failed++
        statusCounts["socket error"] = (statusCounts["socket error"] ?? 0) + 1
        firstFailure ??= String(e)
      }
    }
  }
  await Promise.all(Array.from({ length: request.concurrency }, lane))
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    attempted: ok + failed,
    ok,
    failed,
    statusCounts,
    firstFailure,
    seconds,
    perSecond: ok / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    bytes
  }
}

const reply = (message: Reply) => process.send!(message)

process.on("message", (message: Request) => {
  const run = async (): Promise<Reply | null> => {
    switch (message.type) {
      case "sign":
        return { type: "signed", ...(await sign(message.jobs, message.buyers, message.maxSeconds)) }
      case "challenge":
        return { type: "challenge", stats: await challenge(message.url, message.connections, message.seconds) }
      case "load":
        return { type: "load", stats: await load(message) }
      case "purchase":
        return { type: "purchase", stats: await purchase(message) }
      case "exit":
        process.exit(0)
    }
  }
  run().then((r) => r && reply(r), (e) => reply({ type: "error", message: e instanceof Error ? e.stack ?? e.message : String(e) }))
})

// The parent may die without saying so: never outlive it.
process.on("disconnect", () => process.exit(0))

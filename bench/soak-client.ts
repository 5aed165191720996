/**
 * The load process of bench/soak.ts (forked by it, so firing requests does not share the server's event loop):
 * a steady open-loop mix of requests for a fixed time, at most `maxInFlight` at once (a request that would go
 * past that is skipped and counted, never queued), with EIP-3009 payments pre-signed in small batches as it goes.
 * Answers `stats` at any time with cumulative counts; at the end, or on `stop`, drains what is in flight and
 * answers `done`.
 */
import { Agent, request as httpRequest } from "node:http"
import { gunzipSync } from "node:zlib"
import type { Hex } from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { transferWithAuthorizationTypes } from "../adapters/evm/EvmPayment.js"
import type { WireRequirement } from "./load-client.js"

/** Requests per second of each kind; a reprice (PATCH, then the new checkout's 402 and the old one's 410) every so often. */
export interface SoakRates {
  readonly repoPage: number
  readonly challenge: number
  readonly ownerPage: number
  readonly purchase: number
  readonly repriceEverySeconds: number
}

export interface SoakPlan {
  readonly seconds: number
  readonly origin: string
  readonly repoPage: string
  readonly ownerPage: string
  /** Path of the test checkout the challenges and purchases go to. */
  readonly testCheckout: string
  readonly accepted: WireRequirement
  readonly resource: unknown
  /** The listing repriced now and then (not the one bought: a PATCH voids the checkout). */
  readonly reprice: { readonly path: string; readonly apiKey: string; readonly prices: readonly [string, string]; readonly testCheckout: string }
  readonly rates: SoakRates
  /** Requests in flight at most; one more is skipped (and counted), never queued. */
  readonly maxInFlight: number
}

/** Cumulative counts of the load so far (see `counts` below), and the latency of the latest interval. */
export type SoakCounts = Readonly<typeof counts> & {
  readonly elapsedSeconds: number
  /** "<kind> <status or error code>" for every answer that was not the expected one. */
  readonly errors: Readonly<Record<string, number>>
  /** "<kind> <status>" for the 4xx answers that were expected (402 challenges, 410 from a voided checkout). */
  readonly expected: Readonly<Record<string, number>>
  /** p99 latency (ms) of the requests finished since the previous `stats`. */
  readonly latencyP99: number
}

export type SoakRequest = { readonly type: "start"; readonly plan: SoakPlan } | { readonly type: "stats" } | { readonly type: "stop" }
export type SoakReply =
  | { readonly type: "started"; readonly signed: number; readonly signSeconds: number }
  | { readonly type: "stats"; readonly counts: SoakCounts }
  | { readonly type: "done"; readonly counts: SoakCounts }
  | { readonly type: "error"; readonly message: string }

const TICK_MS = 100
const TIMEOUT_MS = 30_000
const DRAIN_MS = 35_000
const BUYERS = 8

const counts = {
  requests: 0, ok2xx: 0, expected4xx: 0, unexpected4xx: 0, server5xx: 0, network: 0,
  purchasesOk: 0, purchasesFailed: 0, reprices: 0,
  /** Not sent: `maxInFlight` reached, or no pre-signed payment left. */
  skipped: 0,
  signed: 0
}
const errors: Record<string, number> = {}
const expected: Record<string, number> = {}
let latencies: Array<number> = []
let inFlight = 0
let startedAt = 0
let stopping = false
const bump = (map: Record<string, number>, key: string) => void (map[key] = (map[key] ?? 0) + 1)

const snapshot = (): SoakCounts => {
  const sorted = latencies.sort((a, b) => a - b)
  latencies = []
  const p99 = sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]!
  return { elapsedSeconds: (performance.now() - startedAt) / 1000, ...counts, errors: { ...errors }, expected: { ...expected }, latencyP99: p99 }
}

// ---------------------------------------------------------------------------------------------------------
// Payments, pre-signed in batches: below LOW seconds of demand, sign up to HIGH, one per turn of the loop.

const accounts: Array<PrivateKeyAccount> = Array.from({ length: BUYERS }, () => privateKeyToAccount(generatePrivateKey()))
const stock: Array<string> = []
const randomNonce = (): Hex => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`

const signOne = async (accepted: WireRequirement, resource: unknown) => {
  const buyer = accounts[counts.signed % accounts.length]!
  const now = Math.floor(Date.now() / 1000)
  const authorization = {
    from: buyer.address, to: accepted.payTo as Hex, value: BigInt(accepted.amount),
    validAfter: BigInt(now - 60), validBefore: BigInt(now + 3600), nonce: randomNonce()
  }
  const signature = await buyer.signTypedData({
    domain: { name: accepted.extra["name"]!, version: accepted.extra["version"]!, chainId: Number(accepted.network.split(":")[1]), verifyingContract: accepted.asset as Hex },
    types: transferWithAuthorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: authorization
  })
  const payload = { signature, authorization: { ...authorization, value: String(authorization.value), validAfter: String(authorization.validAfter), validBefore: String(authorization.validBefore) } }
  stock.push(Buffer.from(JSON.stringify({ x402Version: 2, resource, accepted, payload }), "utf8").toString("base64"))
  counts.signed++
}

const reply = (message: SoakReply) => process.send!(message)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const keepSigning = async (plan: SoakPlan) => {
  const low = Math.ceil(plan.rates.purchase * 4)
  const high = Math.ceil(plan.rates.purchase * 10)
  while (!stopping) {
    if (stock.length >= low) await sleep(250)
    // One signature per turn of the event loop, so the requests' timers and answers are not held up.
    else while (!stopping && stock.length < high) await signOne(plan.accepted, plan.resource).then(() => new Promise((r) => setImmediate(r)))
  }
}

// ---------------------------------------------------------------------------------------------------------
// Requests.

interface Answer { readonly status: number; readonly body: Buffer; readonly headers: Readonly<Record<string, string | Array<string> | undefined>> }

/** Keep-alive, `maxInFlight` sockets; made when the load starts. */
let agent: Agent

const send = (url: string, method: string, headers: Record<string, string>, body?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(url, { method, agent, headers, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }))
      res.on("error", reject)
    })
    req.on("timeout", () => req.destroy(Object.assign(new Error(`timed out after ${TIMEOUT_MS} ms`), { code: "TIMEOUT" })))
    req.on("error", reject)
    req.end(body)
  })

/** Why an answer is not what `kind` expects, or null. */
type Check = (answer: Answer) => string | null

const goods: Check = (a) => {
  const receipt = a.headers["payment-response"]
  if (typeof receipt !== "string") return "no PAYMENT-RESPONSE"
  if (JSON.parse(Buffer.from(receipt, "base64").toString("utf8")).success !== true) return "receipt not a success"
  return gunzipSync(a.body).includes("MANIFEST.json") ? null : "no MANIFEST.json in the goods"
}
const challenge402: Check = (a) => (typeof a.headers["payment-required"] === "string" ? null : "no PAYMENT-REQUIRED")
const json: Check = (a) => {
  JSON.parse(a.body.toString("utf8"))
  return null
}

/** One request, counted; resolves to the answer when it was the expected one, else null. Never rejects. */
const fire = async (kind: string, url: string, expect: number, check: Check, method = "GET", headers: Record<string, string> = {}, body?: string) => {
  inFlight++
  const t0 = performance.now()
  try {
    const answer = await send(url, method, headers, body)
    latencies.push(performance.now() - t0)
    const s = answer.status
    if (s >= 200 && s < 300) counts.ok2xx++
    else if (s >= 400 && s < 500) s === expect ? counts.expected4xx++ : counts.unexpected4xx++
    else if (s >= 500) counts.server5xx++
    if (s !== expect) {
      bump(errors, `${kind} ${s}`)
      return null
    }
    if (s >= 400) bump(expected, `${kind} ${s}`)
    let problem: string | null
    try {
      problem = check(answer)
    } catch (e) {
      problem = e instanceof Error ? e.message : String(e)
    }
    if (problem !== null) {
      bump(errors, `${kind} ${s} but ${problem}`)
      return null
    }
    return answer
  } catch (e) {
    counts.network++
    bump(errors, `${kind} ${(e as NodeJS.ErrnoException).code ?? "network error"}`)
    return null
  } finally {
    counts.requests++
    inFlight--
  }
}

const purchase = async (plan: SoakPlan, payment: string) => {
  const ok = await fire("purchase", plan.origin + plan.testCheckout, 200, goods, "GET", { "payment-signature": payment })
  if (ok) counts.purchasesOk++
  else counts.purchasesFailed++
}

let priceIndex = 0
let repriceOn = false
/** The reprice listing's test checkout now. */
let current = ""
/** PATCH the price, then the new test checkout must answer 402 and the one it replaced 410. */
const reprice = async (plan: SoakPlan) => {
  repriceOn = true
  const { reprice: r } = plan
  try {
    priceIndex = 1 - priceIndex
    const headers = { authorization: `Bearer ${r.apiKey}`, "content-type": "application/json" }
    const answer = await fire("reprice", plan.origin + r.path, 200, json, "PATCH", headers, JSON.stringify({ price_usd: r.prices[priceIndex] }))
    if (answer === null) return
    counts.reprices++
    const next = new URL(JSON.parse(answer.body.toString("utf8")).test_checkout_url as string).pathname
    const old = current
    current = next
    await Promise.all([
      fire("repriced-checkout", plan.origin + next, 402, challenge402),
      old === next ? Promise.resolve(null) : fire("voided-checkout", plan.origin + old, 410, json)
    ])
  } finally {
    repriceOn = false
  }
}

const run = async (plan: SoakPlan) => {
  current = plan.reprice.testCheckout
  agent = new Agent({ keepAlive: true, maxSockets: plan.maxInFlight })
  startedAt = performance.now()
  const deadline = startedAt + plan.seconds * 1000
  const due = { repoPage: 0, challenge: 0, ownerPage: 0, purchase: 0, reprice: 0 }
  const accept = { accept: "application/json" }
  const launch: Record<keyof typeof due, () => void> = {
    repoPage: () => void fire("repo-page", plan.origin + plan.repoPage, 200, json, "GET", accept),
    ownerPage: () => void fire("owner-page", plan.origin + plan.ownerPage, 200, json, "GET", accept),
    challenge: () => void fire("challenge", plan.origin + plan.testCheckout, 402, challenge402),
    purchase: () => {
      const payment = stock.shift()
      if (payment === undefined) counts.skipped++
      else void purchase(plan, payment)
    },
    reprice: () => {
      if (repriceOn) counts.skipped++
      else void reprice(plan)
    }
  }
  const perSecond = { ...plan.rates, reprice: 1 / plan.rates.repriceEverySeconds }
  let last = performance.now()
  while (!stopping && performance.now() < deadline) {
    await sleep(TICK_MS)
    const now = performance.now()
    const dt = Math.min(1, (now - last) / 1000)
    last = now
    for (const kind of Object.keys(due) as Array<keyof typeof due>) {
      due[kind] += perSecond[kind] * dt
      for (; due[kind] >= 1; due[kind]--) {
        if (inFlight >= plan.maxInFlight) counts.skipped++
        else launch[kind]()
      }
    }
  }
  stopping = true
  const drainUntil = performance.now() + DRAIN_MS
  while ((inFlight > 0 || repriceOn) && performance.now() < drainUntil) await sleep(50)
  agent.destroy()
  return snapshot()
}

/** A first batch of payments signed, then the load; the rest is signed as it goes. */
const start = async (plan: SoakPlan) => {
  const t0 = performance.now()
  while (stock.length < Math.ceil(plan.rates.purchase * 10)) await signOne(plan.accepted, plan.resource)
  reply({ type: "started", signed: counts.signed, signSeconds: (performance.now() - t0) / 1000 })
  void keepSigning(plan)
  return run(plan)
}

process.on("message", (message: SoakRequest) => {
  switch (message.type) {
    case "start":
      return void start(message.plan).then(
        (final) => reply({ type: "done", counts: final }),
        (e) => reply({ type: "error", message: e instanceof Error ? e.stack ?? e.message : String(e) })
      )
    case "stats":
      return reply({ type: "stats", counts: snapshot() })
    case "stop":
      stopping = true
  }
})

// Ctrl-C reaches this process too: the parent decides when to stop (it sends `stop`), so its summary and
// teardown still happen. The parent may die without saying so: never outlive it.
process.on("SIGINT", () => {})
process.on("disconnect", () => process.exit(0))

/*
 * Several hosts on one PostgreSQL, as an operator runs them: three real server processes (`tsx
 * hosts/node/main.ts`) on one fresh database, behind a loopback round-robin proxy that is also their BASE_URL,
 * with a loopback fake GitHub, a loopback fake facilitator and a loopback webhook receiver. The front door's
 * TTL is set to 60 s, so a write can only reach another host's remembered answers through LISTEN/NOTIFY.
 *
 * - a reprice on A is served by B and C (latency printed, p50/p99 over many writes), also after every host's
 *   listening connection was killed (the write made while they were deaf included);
 * - the payment-attempt limit (60 a minute per client address) admits 60 across all three hosts, not 3 × 60;
 *   also behind a balancer that appends X-Forwarded-For (TRUSTED_PROXIES): 60 per buyer, whatever
 *   X-Forwarded-For the buyer sends itself;
 * - 50 concurrent copies of one payment spread over the hosts: one settle, one sale, one webhook delivery, and
 *   the hosts' metrics (METRICS_PORT) summed count one settled sale and one delivery;
 * - a host killed (SIGKILL) mid-purchase: the buyer's retry with its payment-identifier, through the proxy
 *   to another host, gets the goods, and there is one sale;
 * - a host killed after it asked the facilitator to settle (the transfer lands on the chain, the answer never
 *   reaches the host): the retry on another host finds the transfer on the chain (a loopback JSON-RPC server)
 *   and gets the goods, with no second settle and one sale;
 * - the hosts left stop cleanly on SIGTERM.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { closedPort, startFakeFacilitator, transactionOf } from "../faults/fakeFacilitator.js"
import { request, type ServerProcess, signInFromLog, startServer } from "../restart/serverProcess.js"
import { BASE_WALLET } from "../support/app.js"
import { startFakeGithubServer, tarballOf } from "../support/fakeGithubServer.js"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"
import { acceptedOf, b64, newPaymentId, signEvm, unb64, untar, withPaymentId } from "../support/purchase.js"
import { startReceiver } from "../webhooks/receiver.js"
import { chain, landTransfer, LATEST_BLOCK } from "../support/chainRpc.js"
import { startChainRpcServer } from "../support/chainRpcServer.js"
import { startRoundRobinProxy } from "./roundRobinProxy.js"

const WIDGET = { owner: "Octo-Org", name: "Widget", files: { "README.md": "# Widget\n", "src/index.ts": "export const widget = 1\n" } }
const SECRET_KEYS = `hosts:${Buffer.alloc(32, 9).toString("base64")}`
const PAGE = "/r/Octo-Org/Widget"
const WRITES = 40

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const expectStatus = (reply: { status: number; text: string }, status: number) => expect(reply.status, reply.text).toBe(status)
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** Milliseconds until `host` serves the repo page at `price` (polled every few ms), or throws after `limitMs`. */
const visibleAfter = async (host: string, price: string, since: number, limitMs: number): Promise<number> => {
  for (;;) {
    const res = await fetch(`${host}${PAGE}`, { headers: { accept: "application/json" } })
    const page = (await res.json()) as { price_usd?: string }
    if (res.status === 200 && page.price_usd === price) return performance.now() - since
    if (performance.now() - since > limitMs) throw new Error(`${host} still serves ${page.price_usd} ${limitMs} ms after the reprice to ${price}`)
    await sleep(3)
  }
}

/** A v2 payment with a payment-identifier id, as the official client signs it, for the listing's live checkout. */
const signedPayment = (checkoutUrl: string) =>
  Effect.gen(function*() {
    const res = yield* Effect.promise(() => fetch(checkoutUrl))
    expect(res.status).toBe(402)
    const required = unb64(res.headers.get("payment-required"))
    const buyer = privateKeyToAccount(generatePrivateKey())
    const signature = withPaymentId(yield* signEvm(buyer, required, acceptedOf(required, "eip155:8453")), newPaymentId())
    const authorization = (signature.payload as any).authorization as { from: string; to: string; value: string; nonce: string }
    return { header: b64(signature), transaction: transactionOf({ paymentPayload: signature }), nonce: authorization.nonce, from: authorization.from, authorization }
  })

/** The address the proxy connects from when it acts as a load balancer that appends X-Forwarded-For. */
const BALANCER = "127.0.0.9"

/** A payment attempt made from `localAddress` (one buyer behind the balancer), with headers of its own: the status. */
const payFrom = (url: string, header: string, localAddress: string, headers: Record<string, string> = {}) =>
  new Promise<number>((resolve) => {
    const req = httpRequest(url, { localAddress, agent: false, headers: { "payment-signature": header, ...headers } }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", () => resolve(0))
    req.end()
  })

const payOnce = (url: string, header: string) =>
  fetch(url, { headers: { "payment-signature": header }, signal: AbortSignal.timeout(60_000) }).then(
    async (res) => ({ status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }),
    (e: Error) => ({ status: 0, headers: new Headers(), bytes: Buffer.from(e.message) })
  )

const admin = (url: string) =>
  <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)

await describePostgres("three hosts on one PostgreSQL behind a round-robin proxy", () => {
  it.live("share freshness, limits, payments and webhooks, and lose no sale when one is killed", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* postgresTestDatabaseUrl
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-three-hosts-"))),
        (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
      )
      const github = yield* Effect.acquireRelease(Effect.promise(() => startFakeGithubServer([WIDGET])), (g) => Effect.promise(() => g.close()))
      const facilitator = yield* Effect.acquireRelease(Effect.promise(() => startFakeFacilitator()), (f) => Effect.promise(() => f.close()))
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))
      const rpc = yield* Effect.acquireRelease(Effect.promise(() => startChainRpcServer()), (r) => Effect.promise(() => r.close()))
      // The three hosts' ports, the proxy's, and the three hosts' metrics ports.
      const ports = yield* Effect.promise(() => Promise.all(Array.from({ length: 7 }, () => closedPort())))
      const origins = ports.slice(0, 3).map((p) => `http://127.0.0.1:${p}`)
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => startRoundRobinProxy(origins, ports[3])), (p) => Effect.promise(() => p.close()))
      const env = (name: string, i: number) => ({
        TMPDIR: dir,
        DATA_DIR: join(dir, name),
        DATABASE_URL: databaseUrl,
        BASE_URL: proxy.url,
        GITHUB_API_URL: github.url,
        SECRET_KEYS,
        X402_FACILITATOR_URL: facilitator.url,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        BASE_RPC_URL: rpc.baseUrl,
        SOLANA_RPC_URL: rpc.solanaUrl,
        RESPONSE_CACHE_MS: "60000",
        PUBLIC_PAGES_PER_MINUTE: "0",
        // The balancer's address when it forwards (step 3b); the other steps reach the hosts from other addresses.
        TRUSTED_PROXIES: BALANCER,
        METRICS_PORT: String(ports[4 + i])
      })
      const hosts: Array<ServerProcess> = yield* Effect.all(
        ["a", "b", "c"].map((name, i) => startServer(env(name, i), ports[i]!, 240_000)),
        { concurrency: "unbounded" }
      )
      const [A, B, C] = hosts as [ServerProcess, ServerProcess, ServerProcess]

      // A seller on host A, with a webhook and a listing.
      const session = yield* signInFromLog(A, "hosts-seller@example.com")
      const key = (yield* request(A.origin, "POST", "/my/keys", { token: session })).json.key as string
      expectStatus(yield* request(A.origin, "PATCH", "/my/account", { token: key, body: { webhook_url: receiver.url } }), 200)
      const listed = yield* request(A.origin, "POST", "/repos", {
        token: key,
        body: { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET }
      })
      expectStatus(listed, 201)

      // 1. Freshness: B and C remember the page (60 s TTL); each reprice on A must reach them through NOTIFY.
      for (const host of [B, C]) expect((yield* request(host.origin, "GET", PAGE)).json.price_usd).toBe("1.00")
      const latencies: Array<number> = []
      for (let i = 0; i < WRITES; i++) {
        const price = (2 + i / 100).toFixed(2)
        expectStatus(yield* request(A.origin, "PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: price } }), 200)
        const since = performance.now()
        latencies.push(...(yield* Effect.promise(() => Promise.all([B, C].map((h) => visibleAfter(h.origin, price, since, 5_000))))))
      }
      const sorted = [...latencies].sort((x, y) => x - y)
      console.log(
        `reprice on A served by B and C: ${latencies.length} observations over ${WRITES} writes, p50 ${percentile(sorted, 50).toFixed(1)} ms, ` +
          `p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (target p99 <= 200 ms)`
      )

      // 2. Every host's listening connection killed, and a reprice made while they cannot hear it: each host
      // notices (heartbeat), forgets what it remembered and listens again, so B and C serve the new price.
      const killed = yield* admin(databaseUrl)((sql) =>
        sql<{ pid: number }>`SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`
      )
      expect(killed.length).toBe(3)
      expectStatus(yield* request(A.origin, "PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "9.00" } }), 200)
      const deaf = performance.now()
      const recovered = yield* Effect.promise(() => Promise.all([B, C].map((h) => visibleAfter(h.origin, "9.00", deaf, 15_000))))
      console.log(`after the listeners were killed, the missed reprice was served by B and C after ${recovered.map((ms) => ms.toFixed(0)).join(" and ")} ms`)
      // Listening again: the next write is heard at once.
      yield* Effect.promise(() => sleep(1_500))
      expectStatus(yield* request(A.origin, "PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "1.00" } }), 200)
      const again = performance.now()
      yield* Effect.promise(() => Promise.all([B, C].map((h) => visibleAfter(h.origin, "1.00", again, 5_000))))
      for (const host of hosts) expect(host.output()).toContain("Lost the subscription to other hosts' writes")

      const checkoutUrl = (yield* request(A.origin, "GET", "/my/stores", { token: key })).json.stores[0].checkout_url as string
      expect(checkoutUrl.startsWith(proxy.url)).toBe(true)

      // 3. One limit across the hosts: 90 junk payments from one client address, spread over A, B and C.
      proxy.from = "127.0.0.5"
      const junk = yield* signedPayment(checkoutUrl)
      const forged = b64({ ...JSON.parse(Buffer.from(junk.header, "base64").toString("utf8")), payload: { ...JSON.parse(Buffer.from(junk.header, "base64").toString("utf8")).payload, signature: `0x${"11".repeat(65)}` } })
      const firstJunk = proxy.dispatched.length
      const junkAnswers = yield* Effect.forEach(Array.from({ length: 90 }), () => Effect.promise(() => payOnce(checkoutUrl, forged)), { concurrency: 6 })
      const spreadJunk = new Set(proxy.dispatched.slice(firstJunk))
      const admitted = junkAnswers.filter((r) => r.status !== 429)
      console.log(`payment attempts from one address over ${spreadJunk.size} hosts: ${admitted.length} admitted, ${junkAnswers.length - admitted.length} refused with 429 (limit 60 a minute)`)
      expect(spreadJunk.size).toBe(3)
      expect(admitted.every((r) => r.status === 402)).toBe(true)
      expect(admitted.length).toBe(60)
      expect(facilitator.calls.length).toBe(0)

      // 3b. Behind a balancer that appends X-Forwarded-For (TRUSTED_PROXIES names it): each buyer's own address
      // is limited across the hosts, not the balancer's, and a buyer who sends an X-Forwarded-For of its own
      // (a fresh address per request) does not get past its limit with it.
      proxy.from = BALANCER
      proxy.forwardFor = true
      const firstForwarded = proxy.dispatched.length
      const behind = yield* Effect.forEach(["127.0.2.1", "127.0.2.2"], (buyer) =>
        Effect.forEach(Array.from({ length: 70 }), (_, i) =>
          Effect.promise(() => payFrom(checkoutUrl, forged, buyer, buyer.endsWith(".2") ? { "x-forwarded-for": `203.0.113.${i + 1}` } : {})), { concurrency: 6 }))
      expect(new Set(proxy.dispatched.slice(firstForwarded)).size).toBe(3)
      console.log(`behind a balancer: buyer 1 had ${behind[0]!.filter((st) => st === 402).length} attempts admitted, buyer 2 (spoofing X-Forwarded-For) ${behind[1]!.filter((st) => st === 402).length}, of 70 each`)
      for (const answers of behind) {
        expect(answers.filter((st) => st === 402).length).toBe(60)
        expect(answers.filter((st) => st === 429).length).toBe(10)
      }
      proxy.forwardFor = false
      expect(facilitator.calls.length).toBe(0)

      // 4. 50 concurrent copies of one payment, spread over the hosts: one settle, one sale, one webhook.
      proxy.from = "127.0.0.3"
      const payment = yield* signedPayment(checkoutUrl)
      const firstCopy = proxy.dispatched.length
      const copies = yield* Effect.promise(() => Promise.all(Array.from({ length: 50 }, () => payOnce(checkoutUrl, payment.header))))
      expect(new Set(proxy.dispatched.slice(firstCopy)).size).toBe(3)
      const statuses = copies.map((c) => c.status)
      const others = copies.filter((c) => c.status !== 200 && c.status !== 503)
        .map((c) => `${c.status} ${c.headers.get("payment-required") ? unb64(c.headers.get("payment-required")).error : c.bytes.toString("utf8").slice(0, 80)}`)
      console.log(`50 copies of one payment: ${statuses.filter((s) => s === 200).length} × 200 (the goods), ${statuses.filter((s) => s === 503).length} × 503 settlement_pending, others: ${others.join("; ") || "none"}`)
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true)
      expect(statuses).toContain(200)
      const settles = facilitator.calls.filter((c) => c.path === "/settle" && c.body?.paymentPayload?.payload?.authorization?.nonce === payment.nonce)
      expect(settles.length).toBe(1)
      for (const c of copies.filter((c) => c.status === 200)) expect(unb64(c.headers.get("payment-response")).transaction).toBe(payment.transaction)
      yield* Effect.promise(() => receiver.waitFor(1, 30_000))
      yield* Effect.promise(() => sleep(3_000))
      expect(receiver.arrivals.length).toBe(1)
      const sales = (yield* request(B.origin, "GET", "/my/sales", { token: key })).json.sales
      expect(sales.map((s: any) => s.transaction)).toEqual([payment.transaction])
      // Each host's metrics count what that host did: summed over the three, one sale and one delivery.
      const summed = (series: string) =>
        Effect.promise(async () => {
          let total = 0
          for (const metricsPort of ports.slice(4)) {
            const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
            const line = text.split("\n").find((l) => l.startsWith(`${series} `))
            total += line === undefined ? 0 : Number(line.slice(series.length + 1))
          }
          return total
        })
      expect(yield* summed(`repomarket_sales_settled_total{livemode="true",chain="base"}`)).toBe(1)
      expect(yield* summed(`repomarket_webhook_attempts_total{outcome="delivered"}`)).toBe(1)

      // 5. A host killed mid-purchase (its verify held at the facilitator): the buyer's retry with the same
      // payment and payment-identifier goes through the proxy to another host and gets the goods.
      proxy.from = "127.0.0.4"
      const interrupted = yield* signedPayment(checkoutUrl)
      facilitator.verify = "hold"
      const firstTry = payOnce(checkoutUrl, interrupted.header)
      const verifyOf = () => facilitator.calls.some((c) => c.path === "/verify" && c.body?.paymentPayload?.payload?.authorization?.nonce === interrupted.nonce)
      while (!verifyOf()) yield* Effect.promise(() => sleep(10))
      const victim = hosts[proxy.dispatched.at(-1)!]!
      yield* Effect.promise(() => victim.kill("SIGKILL"))
      const lost = yield* Effect.promise(() => firstTry)
      expect(lost.status === 0 || lost.status === 502).toBe(true)
      facilitator.verify = "ok"
      facilitator.release()
      const retried = yield* Effect.promise(() => payOnce(checkoutUrl, interrupted.header))
      expect(retried.status, retried.bytes.toString("utf8").slice(0, 300)).toBe(200)
      expect(untar(retried.bytes)).toEqual(untar(tarballOf(WIDGET)))
      const survivor = hosts.find((h) => h !== victim)!
      const after = (yield* request(survivor.origin, "GET", "/my/sales", { token: key })).json.sales
      expect(after.map((s: any) => s.transaction)).toEqual([interrupted.transaction, payment.transaction])
      yield* Effect.promise(() => receiver.waitFor(2, 30_000))

      // 6. A host killed after it asked the facilitator to settle: the facilitator's transfer lands on the chain,
      // its answer reaches no one, and the sale the host recorded first is left pending. The buyer's retry goes
      // to another host, which finds the transfer on the chain and delivers; nothing is settled twice.
      proxy.from = "127.0.0.6"
      const midSettle = yield* signedPayment(checkoutUrl)
      facilitator.settle = "hold"
      const settleCalls = () => facilitator.calls.filter((c) => c.path === "/settle" && c.body?.paymentPayload?.payload?.authorization?.nonce === midSettle.nonce)
      const cutOff = payOnce(checkoutUrl, midSettle.header)
      while (settleCalls().length === 0) yield* Effect.promise(() => sleep(10))
      const settler = hosts[proxy.dispatched.at(-1)!]!
      expect(settler).not.toBe(victim)
      yield* Effect.promise(() => settler.kill("SIGKILL"))
      const cut = yield* Effect.promise(() => cutOff)
      expect(cut.status === 0 || cut.status === 502).toBe(true)
      landTransfer(midSettle.authorization, { tx: midSettle.transaction as `0x${string}`, block: LATEST_BLOCK - 3n })
      facilitator.settle = "ok"
      facilitator.release()
      // The pending sale is resolved from the chain (by the retry, or by a host's reconciler first): while it is
      // not, the answer is 503 settlement_pending with Retry-After, and the buyer tries again.
      let delivered = yield* Effect.promise(() => payOnce(checkoutUrl, midSettle.header))
      let tries = 0
      for (; delivered.status === 503 && tries < 30; tries++) {
        yield* Effect.promise(() => sleep(1_000))
        delivered = yield* Effect.promise(() => payOnce(checkoutUrl, midSettle.header))
      }
      console.log(`a host killed mid-settle: the buyer's retry on another host was answered ${delivered.status} after ${tries} × 503 settlement_pending`)
      expect(delivered.status, delivered.bytes.toString("utf8").slice(0, 300)).toBe(200)
      expect(untar(delivered.bytes)).toEqual(untar(tarballOf(WIDGET)))
      expect(unb64(delivered.headers.get("payment-response")).transaction).toBe(midSettle.transaction)
      expect(settleCalls().length).toBe(1)
      const last = hosts.find((h) => h !== victim && h !== settler)!
      const ledger = (yield* request(last.origin, "GET", "/my/sales", { token: key })).json.sales
      expect(ledger.map((s: any) => s.transaction)).toEqual([midSettle.transaction, interrupted.transaction, payment.transaction])
      yield* Effect.promise(() => receiver.waitFor(3, 30_000))

      // 7. The host left stops cleanly on SIGTERM (drain, exit 0).
      for (const host of hosts.filter((h) => h !== victim && h !== settler)) {
        yield* Effect.promise(() => host.stop())
        expect(host.child.exitCode).toBe(0)
        expect(host.output()).toContain("Requests drained")
      }
    }).pipe(Effect.scoped), 600_000)
})

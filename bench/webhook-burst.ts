/**
 * Webhook delivery under a burst: N `sale.settled` events enqueued as fast as PostgreSQL takes them (through
 * the Outbox port, as Purchases does when a sale settles; the sales themselves are not written), while the
 * HTTP host's delivery worker (DeliveryWorkerLive, one per simulated host, each with its own pool) delivers
 * them to a receiver on loopback. Prints delivered count (must equal N), duplicates (must be 0), signatures
 * that verify, p50/p99/max settle-to-delivery latency (event created → whole request at the receiver) and the
 * total time. Not a test: numbers depend on the machine. Exits 1 if a check fails or time runs out.
 *
 *   npx tsx bench/webhook-burst.ts [--n 10000] [--workers 1] [--timeout 180]
 *
 * PostgreSQL comes from TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); a fresh
 * database is created for the run and dropped after. Loopback only: no request leaves the machine.
 */
import { parseArgs } from "node:util"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { DeliveryWorkerLive } from "../hosts/workers/DeliveryWorker.js"
import { verifyWebhookSignature } from "../entry/webhooks.js"
import { postgresProblem, postgresTestDatabase, shownUrl } from "../test/support/postgres.js"
import { currentDatabase, DeliveryNode, freshSecretKeys, nodeConfig, poolOn, seedAccount, seedEvents } from "../test/webhooks/node.js"
import { startReceiver } from "../test/webhooks/receiver.js"

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "10000" },
    workers: { type: "string", default: "1" },
    timeout: { type: "string", default: "180" }
  }
})
const n = Number.parseInt(values.n, 10)
const workers = Number.parseInt(values.workers, 10)
const timeoutMs = Number.parseInt(values.timeout, 10) * 1000
if (!(n > 0) || !(workers > 0) || !(timeoutMs > 0)) {
  console.error("--n, --workers and --timeout must be positive integers")
  process.exit(2)
}

const SECRET = "whsec_bench_webhook_burst"
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const program = Effect.gen(function*() {
  const hook = yield* Effect.acquireRelease(Effect.promise(() => startReceiver(() => 200)), (r) => Effect.promise(() => r.close()))
  const keys = freshSecretKeys()
  const db = yield* Layer.build(postgresTestDatabase())
  const name = yield* currentDatabase.pipe(Effect.provide(db))
  const seeder = yield* Layer.build(DeliveryNode.pipe(Layer.provide(nodeConfig(keys)), Layer.provide(Layer.succeedContext(db))))
  const account = yield* seedAccount(hook.url, SECRET).pipe(Effect.provide(seeder))

  // The workers run from before the burst, as on a live server.
  for (let i = 0; i < workers; i++) {
    yield* Layer.build(DeliveryWorkerLive.pipe(Layer.provide(DeliveryNode), Layer.provide(nodeConfig(keys)), Layer.provide(poolOn(name, 20))))
  }

  const started = Date.now()
  const events = yield* seedEvents(account.id, n, null, 32).pipe(Effect.provide(seeder))
  const enqueuedMs = Date.now() - started
  const created = new Map(events.map((e) => [e.id as string, e.createdAt.getTime()]))

  const answered = () => hook.arrivals.filter((a) => a.answered !== null && a.answered < 300)
  while (new Set(answered().map((a) => a.eventId)).size < n && Date.now() - started < timeoutMs) {
    yield* Effect.sleep("50 millis")
  }
  const lastArrival = Math.max(...hook.arrivals.map((a) => a.arrivedAt))
  // Anything sent twice would arrive now.
  yield* Effect.sleep("1 second")

  const counts = hook.countsByEvent()
  const delivered = new Set(answered().map((a) => a.eventId).filter((id) => id !== null && created.has(id))).size
  const duplicates = hook.arrivals.length - counts.size
  const verified = hook.arrivals.filter((a) => verifyWebhookSignature(SECRET, a.headers["x-service-signature"] as string, a.rawBody)).length
  const latencies = hook.arrivals.filter((a) => a.eventId !== null && created.has(a.eventId))
    .map((a) => a.arrivedAt - created.get(a.eventId!)!)
    .sort((a, b) => a - b)
  const totalMs = lastArrival - started

  console.log(`webhook burst on PostgreSQL (${shownUrl()}), ${workers} delivery worker(s), receiver on 127.0.0.1`)
  console.log(`  events enqueued:    ${n} in ${enqueuedMs} ms (Outbox port, 32 at a time)`)
  console.log(`  delivered:          ${delivered} / ${n}`)
  console.log(`  duplicates:         ${duplicates}`)
  console.log(`  requests received:  ${hook.arrivals.length}, signatures verified: ${verified}`)
  if (latencies.length > 0) {
    console.log(`  settle→delivery:    p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`)
  }
  console.log(`  total:              ${totalMs} ms (first enqueue → last delivery), ${(delivered / (totalMs / 1000)).toFixed(0)} deliveries/s`)
  const ok = delivered === n && duplicates === 0 && verified === hook.arrivals.length
  if (!ok) console.log(Date.now() - started >= timeoutMs ? `  FAILED: time ran out after ${timeoutMs} ms` : "  FAILED")
  return ok
})

const problem = await postgresProblem()
if (problem !== undefined) {
  console.error(`PostgreSQL not reachable at ${shownUrl()} (${problem}); this benchmark needs it.`)
  process.exit(1)
}
const ok = await Effect.runPromise(program.pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
process.exit(ok ? 0 : 1)

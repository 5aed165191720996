/**
 * Sale-recording throughput on embedded PGlite and on PostgreSQL (when reachable), through the SQL adapters.
 * Records N pending sales, then marks each settled, as the purchase flow does; prints sales per second for
 * each backend and their ratio, both measured in this run. Not a test: numbers depend on the machine.
 *
 *   npx tsx bench/sales-recording.ts [--n 2000] [--concurrency 16]
 *
 * PostgreSQL comes from TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); a fresh
 * database is created for the run and dropped after.
 */
import { parseArgs } from "node:util"
import { Effect, Layer, Option } from "effect"
import { StorageSql } from "../adapters/sql/SqlLive.js"
import { Sale } from "../domain/Sale.js"
import { SaleLedger } from "../ports/SaleLedger.js"
import { aSale } from "../test/support/fixtures.js"
import { pgliteTestDatabase } from "../test/support/pglite.js"
import { postgresProblem, postgresTestDatabase, shownUrl } from "../test/support/postgres.js"

const { values } = parseArgs({
  options: { n: { type: "string", default: "2000" }, concurrency: { type: "string", default: "16" } }
})
const n = Number.parseInt(values.n, 10)
const concurrency = Number.parseInt(values.concurrency, 10)
if (!(n > 0) || !(concurrency > 0)) {
  console.error("--n and --concurrency must be positive integers")
  process.exit(2)
}

interface Result {
  readonly backend: string
  readonly recordMs: number
  readonly settleMs: number
}

const run = (backend: string) =>
  Effect.gen(function*() {
    const ledger = yield* SaleLedger
    // One warm-up sale so connection set-up is not measured.
    yield* ledger.recordPending(aSale())
    const sales = Array.from({ length: n }, (_, i) => aSale({ createdAt: new Date(Date.UTC(2024, 0, 1) + i) }))
    const t0 = performance.now()
    const recorded = yield* Effect.forEach(sales, (sale) => ledger.recordPending(sale), { concurrency })
    const t1 = performance.now()
    yield* Effect.forEach(
      recorded,
      ({ sale }) =>
        ledger.settle(new Sale({ ...sale, status: "settled", transaction: `0x${sale.id}`, settledAt: new Date() }), Option.none()),
      { concurrency, discard: true }
    )
    const t2 = performance.now()
    if (recorded.some((r) => !r.created)) return yield* Effect.dieMessage("a fresh payment key was not recorded")
    return { backend, recordMs: t1 - t0, settleMs: t2 - t1 } satisfies Result
  })

const perSecond = (count: number, ms: number) => (count / (ms / 1000)).toFixed(0)

const report = (result: Result) => {
  const total = result.recordMs + result.settleMs
  console.log(
    `${result.backend.padEnd(10)} ${perSecond(n, total).padStart(7)} sales/s` +
      `  (record ${perSecond(n, result.recordMs)}/s, settle ${perSecond(n, result.settleMs)}/s, ${total.toFixed(0)} ms)`
  )
}

const main = Effect.gen(function*() {
  console.log(`Recording and settling ${n} sales, ${concurrency} at a time.`)
  const pglite = yield* run("PGlite").pipe(Effect.provide(StorageSql.pipe(Layer.provide(pgliteTestDatabase()))))
  report(pglite)
  const problem = yield* Effect.promise(postgresProblem)
  if (problem !== undefined) {
    console.log(`PostgreSQL not reachable at ${shownUrl()} (${problem}): no comparison.`)
    return
  }
  const postgres = yield* run("PostgreSQL").pipe(Effect.provide(StorageSql.pipe(Layer.provide(postgresTestDatabase()))))
  report(postgres)
  const ratio = (pglite.recordMs + pglite.settleMs) / (postgres.recordMs + postgres.settleMs)
  console.log(`PostgreSQL / PGlite throughput: ${ratio.toFixed(2)}x`)
})

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exit(1)
})

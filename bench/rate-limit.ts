/**
 * What a per-client limit costs per request: the shared PostgreSQL store (adapters/sql/RateLimiterSql.ts,
 * rate-limiter-flexible, one upsert) against the in-process sliding window (adapters/memory), measured in this
 * run: latency per consume (one at a time, and 24 at a time) and this process's CPU per consume.
 *
 *   npx tsx bench/rate-limit.ts [--n 5000]
 */
import { parseArgs } from "node:util"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { makeRateLimiterMemory } from "../adapters/memory/RateLimiterMemory.js"
import { runMigrations } from "../adapters/sql/Migrations.js"
import { makeRateLimiterSql } from "../adapters/sql/RateLimiterSql.js"
import { postgresProblem, postgresTestDatabaseUrl } from "../test/support/postgres.js"
import { fmt, runMain } from "./support.js"

const { values } = parseArgs({ options: { n: { type: "string", default: "5000" } } })
const n = Number.parseInt(values.n, 10)

type Consume = (key: string, limit: number, windowMs: number) => Effect.Effect<void, unknown>

const measure = async (label: string, consume: Consume, parallel: number) => {
  const run = (i: number) => Effect.runPromise(Effect.either(consume(`checkout:pay:10.0.${i % 250}.${i % 199}`, 1_000_000, 60_000)))
  for (let i = 0; i < 200; i++) await run(i)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < n) await run(next++)
  }))
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  console.log(
    `  ${label.padEnd(34)} ${String(parallel).padStart(2)} at a time: ${fmt((wall * 1000) / n * parallel).padStart(6)} µs per consume (wall), ` +
      `${fmt(n / (wall / 1000)).padStart(7)}/s, this process's CPU ${fmt((cpu.user + cpu.system) / n).padStart(4)} µs per consume`
  )
}

const main = async () => {
  const problem = await postgresProblem()
  if (problem !== undefined) throw new Error(`PostgreSQL needed: ${problem}`)
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const url = yield* postgresTestDatabaseUrl
    const ctx = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 20 }))
    yield* Effect.provide(runMigrations, ctx)
    const sql = yield* Effect.provide(makeRateLimiterSql, ctx)
    const memory = yield* makeRateLimiterMemory
    console.log(`Per-client limit cost, ${n} consumes per run (a fresh key every few requests, limit never reached):`)
    for (const parallel of [1, 24]) {
      yield* Effect.promise(() => measure("memory (sliding window, per process)", memory.consume, parallel))
      yield* Effect.promise(() => measure("PostgreSQL (shared, one upsert)", sql.consume, parallel))
    }
  })))
}

runMain(main)

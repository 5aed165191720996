/*
 * Limits counted in PostgreSQL hold across hosts: two limiters, each on its own pool as two hosts would be,
 * over one fresh database (migrations run), admit L in all for one key. Keys are stored as digests; an
 * database that disappears leaves the limit counted in memory instead of failing requests or lifting the limit.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
import { runMigrations } from "../../adapters/sql/Migrations.js"
import { makeRateLimiterSql } from "../../adapters/sql/RateLimiterSql.js"
import { describePostgres, postgresTestDatabaseUrl, TEST_DATABASE_URL } from "../support/postgres.js"

const host = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4, connectTimeout: "2 seconds" })

/** A limiter on its own pool, as one host has it; the pool lives as long as the test's scope. */
const limiterOn = (url: string) => Layer.build(host(url)).pipe(Effect.flatMap((ctx) => Effect.provide(makeRateLimiterSql, ctx)))

await describePostgres("RateLimiterSql (rate-limiter-flexible on PostgreSQL)", () => {
  it.scoped("two hosts admit a key L times per window in all, concurrently, and keep keys as digests", () =>
    Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      yield* Effect.provide(runMigrations, host(url))
      const [a, b] = [yield* limiterOn(url), yield* limiterOn(url)]
      const attempts = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => Effect.either((i % 2 === 0 ? a : b).consume("checkout:pay:203.0.113.9", 5, 60_000))),
        { concurrency: "unbounded" }
      )
      expect(attempts.filter(Either.isRight)).toHaveLength(5)
      for (const refused of attempts.filter(Either.isLeft)) {
        expect(refused.left._tag).toBe("LimitExceeded")
        expect(refused.left.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        expect(refused.left.retryAfterSeconds).toBeLessThanOrEqual(60)
      }
      // Another key, and the same key under another limit, count on their own.
      yield* a.consume("checkout:pay:203.0.113.10", 5, 60_000)
      yield* b.consume("checkout:pay:203.0.113.9", 100, 60_000)
      const keys = yield* Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM rate_limits`), host(url))
      expect(keys).toHaveLength(3)
      for (const { key } of keys) expect(key).not.toContain("203.0.113")
    }))

  it.scoped("an event of cost n spends n of the limit, across hosts; more than the limit never fits", () =>
    Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      yield* Effect.provide(runMigrations, host(url))
      const [a, b] = [yield* limiterOn(url), yield* limiterOn(url)]
      yield* a.consume("public-pages:client:203.0.113.9", 10, 60_000, 4)
      yield* b.consume("public-pages:client:203.0.113.9", 10, 60_000, 4)
      yield* a.consume("public-pages:client:203.0.113.9", 10, 60_000, 2)
      expect((yield* Effect.flip(b.consume("public-pages:client:203.0.113.9", 10, 60_000, 1)))._tag).toBe("LimitExceeded")
      // Past the limit by less than the cost: 7 + 4 is refused (and, as every refusal here, counted).
      yield* a.consume("public-pages:client:203.0.113.11", 10, 60_000, 7)
      expect((yield* Effect.flip(b.consume("public-pages:client:203.0.113.11", 10, 60_000, 4)))._tag).toBe("LimitExceeded")
      expect((yield* Effect.flip(a.consume("public-pages:client:203.0.113.10", 3, 60_000, 4))).retryAfterSeconds).toBe(60)
    }))

  it.scopedLive("a window ends: the key is admitted again", () =>
    Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      yield* Effect.provide(runMigrations, host(url))
      const a = yield* limiterOn(url)
      yield* a.consume("k", 1, 1_000)
      expect((yield* Effect.flip(a.consume("k", 1, 1_000)))._tag).toBe("LimitExceeded")
      yield* Effect.sleep("1100 millis")
      yield* a.consume("k", 1, 1_000)
    }), 20_000)

  it.scopedLive("the database gone: limits still hold, counted in this process, and nothing fails", () =>
    Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      yield* Effect.provide(runMigrations, host(url))
      const a = yield* limiterOn(url)
      yield* a.consume("k", 3, 60_000)
      // The database disappears under the running limiter (every connection closed, none can be made).
      const name = new URL(url).pathname.slice(1)
      yield* Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)),
        PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), maxConnections: 1 })
      )
      for (let i = 0; i < 3; i++) yield* a.consume("k", 3, 60_000)
      expect((yield* Effect.flip(a.consume("k", 3, 60_000)))._tag).toBe("LimitExceeded")
    }), 30_000)
})

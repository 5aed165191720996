/*
 * Issue 12, finding 13(a): a database that stops answering (here: a table held under an exclusive lock by
 * another connection, so every statement on it waits) must cost a request at most the statement timeout
 * (`DATABASE_STATEMENT_TIMEOUT_MS`) and answer 503 problem+json with Retry-After, never hang or 500.
 * Real PostgreSQL (TEST_DATABASE_URL), through DatabaseLive as `npm start` builds it from its settings.
 * Issue 28: the same answers for a store's `StorageError` as the adapters make it, on memory storage: the
 * database did not answer (`unavailable`) is 503 with Retry-After, any other storage failure a plain 500.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { StorageError } from "../../ports/StorageError.js"
import { ListingStore } from "../../ports/ListingStore.js"
import type { StoragePorts } from "../../app/AppLayer.js"
import { DatabaseLive } from "../../adapters/sql/DatabaseLive.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { BASE_WALLET, call, TestApp } from "../support/app.js"
import { listed, WIDGET_URL } from "../support/flows.js"
import { signInWithKey } from "../support/app.js"
import { origin } from "../support/purchase.js"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"

const TIMEOUT_MS = 1000

class DatabaseUrl extends Effect.Tag("test/DatabaseUrl")<DatabaseUrl, { readonly url: string }>() {}

const app = Layer.unwrapScoped(Effect.map(postgresTestDatabaseUrl, (url) => {
  const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
    ["DATABASE_URL", url],
    ["DATABASE_STATEMENT_TIMEOUT_MS", String(TIMEOUT_MS)]
  ])))
  return TestApp({ storage: StorageSql.pipe(Layer.provide(DatabaseLive), Layer.provide(settings)) }).pipe(
    Layer.merge(Layer.succeed(DatabaseUrl, { url }))
  )
}))

/** A real-time GET, bounded so a hang fails the test instead of the run. */
const timedGet = (path: string, token: string) =>
  Effect.flatMap(origin, (o) =>
    Effect.promise(async () => {
      const started = Date.now()
      const res = await fetch(`${o}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(8000) })
        .catch((e: unknown) => ({ hung: String(e) }))
      if ("hung" in res) return { status: 0, ms: Date.now() - started, type: null, retryAfter: null, body: res.hung as unknown }
      return { status: res.status, ms: Date.now() - started, type: res.headers.get("content-type"), retryAfter: res.headers.get("retry-after"), body: await res.json().catch(() => null) as unknown }
    }))

await describePostgres("PostgreSQL statement timeout", () => {
  layer(app)((it) => {
    it.effect("a statement blocked behind another connection's lock answers 503 with Retry-After within the timeout", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("frozen@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        expect((yield* timedGet("/my/stores", key)).status).toBe(200)

        // Another connection takes the listings table and holds it.
        const { url } = yield* DatabaseUrl
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`LOCK TABLE listings IN ACCESS EXCLUSIVE MODE`
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(release)
          }))
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie))
        yield* Deferred.await(locked)

        const answer = yield* timedGet("/my/stores", key)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        expect({ status: answer.status, type: answer.type, code: (answer.body as { code?: string } | null)?.code }).toEqual({
          status: 503,
          type: "application/problem+json",
          code: "database_unavailable"
        })
        expect(Number(answer.retryAfter)).toBeGreaterThan(0)
        expect(answer.ms).toBeLessThan(TIMEOUT_MS + 2000)

        // The lock gone, the same app answers again.
        expect((yield* timedGet("/my/stores", key)).status).toBe(200)
      }))
  })
})

/** The failure the next `ListingStore.listByAccount` fails with (once), if any. */
let nextFailure: StorageError | null = null

const FailingStorage = Layer.effectContext(Effect.gen(function*() {
  const ctx = yield* Effect.context<StoragePorts>()
  const listings = Context.get(ctx, ListingStore)
  return Context.add(ctx, ListingStore, {
    ...listings,
    listByAccount: (accountId, options) =>
      Effect.suspend(() => {
        const failure = nextFailure
        nextFailure = null
        return failure === null ? listings.listByAccount(accountId, options) : Effect.fail(failure)
      })
  })
})).pipe(Layer.provide(StorageMemory))

describe("A store's StorageError", () => {
  layer(TestApp({ storage: FailingStorage }))((it) => {
    it.effect("unavailable (the database did not answer) is 503 database_unavailable with Retry-After; any other is 500", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("storage-errors@example.com")
        expect((yield* call("GET", "/my/stores", { token: key })).status).toBe(200)

        nextFailure = new StorageError({ unavailable: true, message: "Failed to execute statement" })
        const unavailable = yield* call("GET", "/my/stores", { token: key })
        expect({ status: unavailable.status, type: unavailable.headers["content-type"], code: unavailable.json?.code }).toEqual({
          status: 503,
          type: "application/problem+json",
          code: "database_unavailable"
        })
        expect(unavailable.headers["retry-after"]).toBe("5")
        expect(unavailable.json.retry_after_seconds).toBe(5)

        nextFailure = new StorageError({ unavailable: false, message: "Failed to execute statement" })
        const broken = yield* call("GET", "/my/stores", { token: key })
        expect({ status: broken.status, code: broken.json?.code, retryAfter: broken.headers["retry-after"] }).toEqual({
          status: 500,
          code: "internal_error",
          retryAfter: undefined
        })

        // The store answering again, so does the app.
        expect((yield* call("GET", "/my/stores", { token: key })).status).toBe(200)
      }))
  })
})

/*
 * One real server process (`tsx hosts/node/main.ts`) on PostgreSQL, as a balancer and a process manager see it:
 * SIGTERM while a purchase waits at the facilitator drains it (the buyer gets the goods, the sale is settled,
 * the process exits 0, `/healthz` says 503 shutting_down meanwhile); and `/healthz` answers 503
 * database_unavailable when its database is gone.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { closedPort, startFakeFacilitator } from "../faults/fakeFacilitator.js"
import { request, signInFromLog, startServer } from "../restart/serverProcess.js"
import { BASE_WALLET } from "../support/app.js"
import { startFakeGithubServer } from "../support/fakeGithubServer.js"
import { describePostgres, postgresTestDatabaseUrl, TEST_DATABASE_URL } from "../support/postgres.js"
import { acceptedOf, b64, newPaymentId, signEvm, unb64, withPaymentId } from "../support/purchase.js"

const WIDGET = { owner: "Octo-Org", name: "Widget", files: { "README.md": "# Widget\n" } }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

await describePostgres("a server process stopping and losing its database", () => {
  it.live("SIGTERM finishes the purchase in flight, then exits 0; /healthz tells a balancer first", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* postgresTestDatabaseUrl
      const dir = yield* Effect.acquireRelease(Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-graceful-"))), (d) => Effect.promise(() => rm(d, { recursive: true, force: true })))
      const github = yield* Effect.acquireRelease(Effect.promise(() => startFakeGithubServer([WIDGET])), (g) => Effect.promise(() => g.close()))
      const facilitator = yield* Effect.acquireRelease(Effect.promise(() => startFakeFacilitator()), (f) => Effect.promise(() => f.close()))
      const port = yield* Effect.promise(() => closedPort())
      const server = yield* startServer({
        TMPDIR: dir, DATA_DIR: join(dir, "data"), DATABASE_URL: databaseUrl, BASE_URL: `http://127.0.0.1:${port}`,
        GITHUB_API_URL: github.url, SECRET_KEYS: `g:${Buffer.alloc(32, 3).toString("base64")}`, X402_FACILITATOR_URL: facilitator.url
      }, port, 240_000)
      const health = yield* request(server.origin, "GET", "/healthz")
      expect(health.status).toBe(200)
      expect(health.json).toEqual({ ok: true, database: "reachable" })

      const session = yield* signInFromLog(server, "graceful@example.com")
      const listed = yield* request(server.origin, "POST", "/repos", { token: session, body: { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET } })
      expect(listed.status, listed.text).toBe(201)
      const res = yield* Effect.promise(() => fetch(listed.json.checkout_url))
      const required = unb64(res.headers.get("payment-required"))
      const signature = withPaymentId(yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453")), newPaymentId())

      // The purchase waits at the facilitator's settle when the process is told to stop.
      facilitator.settle = "hold"
      const purchase = fetch(listed.json.checkout_url, { headers: { "payment-signature": b64(signature) } })
        .then(async (r) => ({ status: r.status, bytes: Buffer.from(await r.arrayBuffer()) }))
      while (!facilitator.calls.some((c) => c.path === "/settle")) yield* Effect.promise(() => sleep(10))
      const stopped = server.stop(60_000)
      yield* Effect.promise(() => sleep(1_000))
      // Draining: a balancer's health check is told to go elsewhere; new connections are refused.
      const draining = yield* Effect.promise(() => fetch(`${server.origin}/healthz`).then((r) => r.status, () => 0))
      expect([0, 503]).toContain(draining)
      expect(server.alive()).toBe(true)
      facilitator.release()
      const answered = yield* Effect.promise(() => purchase)
      expect(answered.status, answered.bytes.toString("utf8").slice(0, 200)).toBe(200)
      yield* Effect.promise(() => stopped)
      expect(server.child.exitCode).toBe(0)
      expect(server.output()).toContain("Requests drained")
      const sales = yield* Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ status: string }>`SELECT status FROM sales`),
        PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })
      )
      expect(sales).toEqual([{ status: "settled" }])
    }).pipe(Effect.scoped), 400_000)

  it.live("/healthz is 503 database_unavailable when the database is gone", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* postgresTestDatabaseUrl
      const dir = yield* Effect.acquireRelease(Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-health-"))), (d) => Effect.promise(() => rm(d, { recursive: true, force: true })))
      const port = yield* Effect.promise(() => closedPort())
      const server = yield* startServer({ TMPDIR: dir, DATA_DIR: join(dir, "data"), DATABASE_URL: databaseUrl, SECRET_KEYS: `g:${Buffer.alloc(32, 3).toString("base64")}` }, port, 240_000)
      expect((yield* request(server.origin, "GET", "/healthz")).status).toBe(200)
      const name = new URL(databaseUrl).pathname.slice(1)
      yield* Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)),
        PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), maxConnections: 1 })
      )
      const gone = yield* request(server.origin, "GET", "/healthz")
      expect(gone.status).toBe(503)
      expect(gone.json).toMatchObject({ code: "database_unavailable" })
      expect(gone.headers.get("retry-after")).toBe("5")
    }).pipe(Effect.scoped), 400_000)
})

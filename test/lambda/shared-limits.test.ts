import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, Redacted } from "effect"
import { SMTPServer } from "smtp-server"
import { type LambdaHttpHandler, makeLambdaHandler } from "../../hosts/lambda/LambdaApp.js"
import { LambdaPortsLive } from "../../hosts/lambda/LambdaPorts.js"
import { postgresProblem, REQUIRE_POSTGRES, shownUrl, TEST_DATABASE_URL } from "../support/postgres.js"
import { httpEvent } from "./support.js"

/*
 * Issue 33 finding 5: two Lambda instances — two handlers over the production ports (LambdaPortsLive), each
 * building its own application runtime, database pool and rate limiter, as two warm instances of one function
 * do — on one PostgreSQL database. A per-client limit must count over both, not once per instance. Skipped
 * when PostgreSQL cannot be reached, unless REQUIRE_POSTGRES=1 (CI), which makes it fail.
 */

const admin = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), connectTimeout: "3 seconds", maxConnections: 1 }))
  ))

const problem = await postgresProblem()

describe.skipIf(problem !== undefined && !REQUIRE_POSTGRES)("rate limits of two Lambda instances on one PostgreSQL", () => {
  const database = `repomarket_lambda_limits_${randomBytes(6).toString("hex")}`
  let mails = 0
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume()
      stream.on("end", () => {
        mails++
        callback()
      })
    }
  })
  let instances: ReadonlyArray<LambdaHttpHandler> = []

  beforeAll(async () => {
    if (problem !== undefined) throw new Error(`PostgreSQL not reachable at ${shownUrl()} (${problem}), and REQUIRE_POSTGRES=1`)
    await admin((sql) => sql.unsafe(`CREATE DATABASE ${database}`))
    const port = await new Promise<number>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve((smtp.server.address() as { port: number }).port)))
    const url = new URL(TEST_DATABASE_URL)
    url.pathname = `/${database}`
    const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
      BASE_URL: "https://repomarket.example",
      DATABASE_URL: url.toString(),
      SECRET_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      BASE_RPC_URL: "off",
      SOLANA_RPC_URL: "off"
    }))))
    // Two instances: each call of makeLambdaHandler builds its own runtime (pool, limiter) when first used.
    const ports = Layer.merge(LambdaPortsLive.pipe(Layer.provide(settings)), Logger.remove(Logger.defaultLogger))
    instances = [makeLambdaHandler(ports), makeLambdaHandler(ports)]
    // One after the other: the first runs the migrations.
    for (const instance of instances) await instance.ready()
  }, 60_000)

  afterAll(async () => {
    for (const instance of instances) await instance.dispose()
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
    if (problem === undefined) await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  })

  it("sign-in links from one address: 20 an hour over both instances, not 20 on each", async () => {
    const sourceIp = "198.51.100.33"
    const statuses: Array<number> = []
    // 24 requests, alternating between the instances (12 each): every one for a different email, so each
    // admitted request mails one link and only the per-address limit (20 an hour) applies.
    for (let n = 0; n < 24; n++) {
      const answer = await instances[n % 2]!(httpEvent("POST", "/auth/magic-link", { json: { email: `shared-${n}@example.com` }, sourceIp }))
      statuses.push(answer.statusCode)
    }
    expect({
      admitted: statuses.filter((s) => s === 202).length,
      refused: statuses.filter((s) => s === 429).length,
      mails
    }).toEqual({ admitted: 20, refused: 4, mails: 20 })
    // Another address is not limited, on either instance.
    for (const instance of instances) {
      expect((await instance(httpEvent("POST", "/auth/magic-link", { json: { email: "other@example.com" }, sourceIp: "198.51.100.34" }))).statusCode).toBe(202)
    }
  }, 60_000)
})

import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { SMTPServer } from "smtp-server"
import type { HttpResultV2 } from "../../hosts/lambda/Events.js"
import { type LambdaHttpHandler, makeLambdaHandler } from "../../hosts/lambda/LambdaApp.js"
import { migrations } from "../../adapters/sql/Migrations.js"
import { LambdaPortsLive } from "../../hosts/lambda/LambdaPorts.js"
import { makeScheduledHandler, type ScheduledHandler } from "../../hosts/lambda/ScheduledDelivery.js"
import { postgresProblem, REQUIRE_POSTGRES, shownUrl, TEST_DATABASE_URL } from "../support/postgres.js"
import { httpEvent, SCHEDULED_EVENT } from "./support.js"

/*
 * The production wiring (LambdaPortsLive: PostgreSQL from DATABASE_URL with the bundled migrations, SECRET_KEYS,
 * SMTP) against a real PostgreSQL and a loopback SMTP server. Skipped when PostgreSQL cannot be reached, unless
 * REQUIRE_POSTGRES=1 (CI), which makes it fail.
 */

const admin = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>, url: string = TEST_DATABASE_URL) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), connectTimeout: "3 seconds", maxConnections: 1 }))
  ))

/** The mail as sent (nodemailer may use quoted-printable): soft line breaks joined, `=XX` decoded. */
const quotedPrintable = (raw: string) =>
  Buffer.from(raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8")

const problem = await postgresProblem()

describe.skipIf(problem !== undefined && !REQUIRE_POSTGRES)("production ports on a real PostgreSQL (DATABASE_URL) and SMTP", () => {
  const database = `repomarket_lambda_${randomBytes(6).toString("hex")}`
  const mails: Array<string> = []
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks).toString("utf8"))
        callback()
      })
    }
  })
  let databaseUrl: string
  let http: LambdaHttpHandler
  let scheduled: ScheduledHandler

  beforeAll(async () => {
    if (problem !== undefined) throw new Error(`PostgreSQL not reachable at ${shownUrl()} (${problem}), and REQUIRE_POSTGRES=1`)
    await admin((sql) => sql.unsafe(`CREATE DATABASE ${database}`))
    const port = await new Promise<number>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve((smtp.server.address() as { port: number }).port)))
    const url = new URL(TEST_DATABASE_URL)
    url.pathname = `/${database}`
    databaseUrl = url.toString()
    const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({
      BASE_URL: "https://repomarket.example",
      DATABASE_URL: databaseUrl,
      SECRET_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: "repomarket <no-reply@repomarket.example>",
      // No public chain RPC from a test.
      BASE_RPC_URL: "off",
      SOLANA_RPC_URL: "off"
    }))))
    const ports = LambdaPortsLive.pipe(Layer.provide(settings))
    http = makeLambdaHandler(ports)
    scheduled = makeScheduledHandler(ports)
  })

  afterAll(async () => {
    await http?.dispose()
    await scheduled?.dispose()
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
    if (problem === undefined) await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  })

  const json = (result: HttpResultV2) => JSON.parse(result.body)

  it("starts (migrations from the bundled record), signs in by mailed link, and keeps the session in PostgreSQL", async () => {
    await http.ready()
    const migrated = await admin((sql) => sql.unsafe<{ name: string }>("SELECT name FROM effect_sql_migrations"), databaseUrl)
    // Every bundled migration ran (their names are the record's keys without the `<id>_`).
    expect(migrated.map((m) => m.name)).toEqual(Object.keys(migrations).map((key) => key.replace(/^[0-9]+_/, "")))

    expect(json(await http(httpEvent("GET", "/healthz")))).toEqual({ ok: true })

    const email = "prod@example.com"
    const sent = await http(httpEvent("POST", "/auth/magic-link", { json: { email } }))
    expect(sent.statusCode, sent.body).toBe(202)
    expect(mails).toHaveLength(1)
    const text = quotedPrintable(mails[0]!)
    const token = decodeURIComponent(/https:\/\/repomarket\.example\/auth\/verify\?token=([A-Za-z0-9_%.~-]+)/.exec(text)![1]!)
    const verified = await http(httpEvent("POST", "/auth/verify", { json: { token } }))
    expect(verified.statusCode, verified.body).toBe(200)
    const account = await http(httpEvent("GET", "/my/account", { token: json(verified).access_token }))
    expect(account.statusCode, account.body).toBe(200)
    expect(json(account)).toMatchObject({ email })

    const rows = await admin((sql) => sql.unsafe<{ n: string }>(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'repomarket-lambda'`))
    expect(Number(rows[0]!.n)).toBeGreaterThan(0)
  })

  it("the scheduled handler drains the SQL outbox (nothing queued: one idle pass)", async () => {
    expect(await scheduled(SCHEDULED_EVENT)).toMatchObject({ passes: 1, attempted: 0, stoppedBecause: "idle" })
  })
})

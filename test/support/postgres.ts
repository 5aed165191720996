import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Layer, Redacted } from "effect"

/**
 * Real PostgreSQL for tests. `TEST_DATABASE_URL` names a server and a database to administer from; each test
 * file gets its own fresh database there and drops it at the end. When the server cannot be reached the
 * suite is skipped with a printed reason, unless `REQUIRE_POSTGRES=1`, which makes it fail instead (CI).
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
export const REQUIRE_POSTGRES = process.env.REQUIRE_POSTGRES === "1"

export type TestDatabase = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError>

/** The URL without its password, for messages. */
export const shownUrl = (url: string = TEST_DATABASE_URL): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(an unparseable TEST_DATABASE_URL)"
  }
}

const urlFor = (database: string): string => {
  const parsed = new URL(TEST_DATABASE_URL)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const admin = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), connectTimeout: "3 seconds", maxConnections: 1 }))
  )

/** Why PostgreSQL cannot be used, or undefined when it can. */
export const postgresProblem = async (): Promise<string | undefined> => {
  const exit = await Effect.runPromiseExit(admin((sql) => sql`SELECT 1`))
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.squash(exit.cause) as { readonly message?: unknown; readonly cause?: { readonly message?: unknown } }
  return [failure.message, failure.cause?.message].filter((m) => typeof m === "string" && m !== "").join(": ")
}

/** The URL of a fresh database `repomarket_test_<random>`, dropped (with its connections) when the scope closes. */
export const postgresTestDatabaseUrl = Effect.gen(function*() {
  const name = `repomarket_test_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(
    admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)),
    () =>
      admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).pipe(
        Effect.catchAll((error) => Effect.logWarning(`Could not drop test database ${name}`, error))
      )
  )
  return urlFor(name)
})

/** A fresh database `repomarket_test_<random>`, dropped (with its connections) when the layer is released. */
export const postgresTestDatabase = (): TestDatabase =>
  Layer.unwrapScoped(Effect.map(postgresTestDatabaseUrl, (url) => PgClient.layer({ url: Redacted.make(url), maxConnections: 20 })))

/**
 * Registers `register`'s tests in a `describe` block when PostgreSQL is reachable. Otherwise prints why and
 * skips them, or, with REQUIRE_POSTGRES=1, registers one failing test instead. Use with top-level await.
 */
export const describePostgres = async (
  name: string,
  register: (database: TestDatabase) => void
): Promise<void> => {
  // Imported here so that scripts (bench/) can use this module outside vitest.
  const { describe, it } = await import("@effect/vitest")
  const problem = await postgresProblem()
  if (problem === undefined) {
    describe(name, () => register(postgresTestDatabase()))
    return
  }
  const message = `PostgreSQL not reachable at ${shownUrl()} (${problem})`
  if (REQUIRE_POSTGRES) {
    describe(name, () => {
      it("reaches PostgreSQL, as REQUIRE_POSTGRES=1 demands", () => {
        throw new Error(message)
      })
    })
    return
  }
  console.warn(`${message}: skipping. Set REQUIRE_POSTGRES=1 to make this a failure.`)
  describe.skip(name, () => register(postgresTestDatabase()))
}

import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { DatabaseLive } from "../../../adapters/sql/DatabaseLive.js"
import { describePostgres, TEST_DATABASE_URL } from "../../support/postgres.js"

// The embedded default (no DATABASE_URL) is covered by PgliteEmbedded.test.ts.
await describePostgres("DatabaseLive with DATABASE_URL", () => {
  it.live("connects to the PostgreSQL server DATABASE_URL names", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ port: number | null; app: string }>`
        SELECT inet_server_port() AS port, current_setting('application_name') AS app`
      expect(row!.port).toBe(Number(new URL(TEST_DATABASE_URL).port || 5432))
      expect(row!.app).toBe("repomarket")
    }).pipe(
      Effect.provide(DatabaseLive.pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", TEST_DATABASE_URL]]))))
      ))
    ))
})

import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { HealthCheck } from "../../ports/HealthCheck.js"

/** The health check on SQL storage: `SELECT 1` answers within 2 s. */
export const HealthCheckSql = Layer.effect(
  HealthCheck,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    databaseReachable: sql`SELECT 1`.pipe(
      Effect.timeout("2 seconds"),
      Effect.as(true),
      Effect.catchAllCause(() => Effect.succeed(false))
    )
  }))
)

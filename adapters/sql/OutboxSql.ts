import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { AccountId, EventId, SaleId } from "../../domain/Ids.js"
import { Outbox } from "../../ports/Outbox.js"
import { TimestampColumn } from "./Columns.js"
import { WebhookEventFromRow } from "./WebhookEventRow.js"
import { orStorageError } from "./StorageErrors.js"

/** The webhook Outbox on PostgreSQL (or PGlite) through `@effect/sql`. */
export const OutboxSql = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const enqueue = SqlSchema.void({
      Request: WebhookEventFromRow,
      execute: (row) => sql`INSERT INTO webhook_events ${sql.insert(row)}`
    })
    // Select-and-lease in one statement. SKIP LOCKED lets concurrent workers pass over rows another worker is
    // leasing instead of waiting for them, and a row leased meanwhile fails the re-checked `<= now`. As in the
    // memory adapter, callers get each event as it was when claimed; the stored row carries the lease.
    const claimDue = SqlSchema.findAll({
      Request: Schema.Struct({ now: TimestampColumn, limit: Schema.Int, leaseUntil: TimestampColumn }),
      Result: WebhookEventFromRow,
      execute: ({ leaseUntil, limit, now }) =>
        sql`WITH due AS (
              SELECT id, next_attempt_at FROM webhook_events
              WHERE status = 'pending' AND next_attempt_at <= ${now}
              ORDER BY next_attempt_at, id
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ), leased AS (
              UPDATE webhook_events e SET next_attempt_at = ${leaseUntil}
              FROM due WHERE e.id = due.id
              RETURNING e.id, e.account_id, e.sale_id, e.body, e.status, e.attempts, e.last_error, e.created_at,
                        e.first_attempt_at, due.next_attempt_at
            )
            SELECT * FROM leased ORDER BY next_attempt_at, id`
    })
    const update = SqlSchema.void({
      Request: WebhookEventFromRow,
      execute: (row) => sql`UPDATE webhook_events SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
    })
    // The same update, only while the row is still pending under the caller's lease (see the port).
    const recordAttempt = SqlSchema.findAll({
      Request: Schema.Struct({ event: WebhookEventFromRow, leaseUntil: TimestampColumn }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ event, leaseUntil }) =>
        sql`UPDATE webhook_events SET ${sql.update(event, ["id"])}
            WHERE id = ${event.id} AND status = 'pending' AND next_attempt_at = ${leaseUntil} RETURNING id`
    })
    const findById = SqlSchema.findOne({
      Request: EventId,
      Result: WebhookEventFromRow,
      execute: (id) => sql`SELECT * FROM webhook_events WHERE id = ${id}`
    })
    const findBySale = SqlSchema.findAll({
      Request: SaleId,
      Result: WebhookEventFromRow,
      execute: (saleId) => sql`SELECT * FROM webhook_events WHERE sale_id = ${saleId} ORDER BY created_at, id`
    })
    const cancelPending = SqlSchema.findAll({
      Request: AccountId,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (accountId) =>
        sql`UPDATE webhook_events SET status = 'cancelled'
            WHERE account_id = ${accountId} AND status = 'pending' RETURNING id`
    })

    return {
      enqueue: (event) => enqueue(event).pipe(orStorageError),
      claimDue: (now, limit, leaseUntil) =>
        claimDue({ now, limit: Math.max(0, Math.floor(limit)), leaseUntil }).pipe(orStorageError),
      update: (event) => update(event).pipe(orStorageError),
      recordAttempt: (event, leaseUntil) =>
        recordAttempt({ event, leaseUntil }).pipe(Effect.map((rows) => rows.length === 1), orStorageError),
      findById: (id) => findById(id).pipe(orStorageError),
      findBySale: (saleId) => findBySale(saleId).pipe(orStorageError),
      cancelPending: (accountId) => cancelPending(accountId).pipe(Effect.map((rows) => rows.length), orStorageError)
    }
  })
)

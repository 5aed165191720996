import { Schema } from "effect"
import { DeliveryStatus, WebhookEvent } from "../../domain/WebhookEvent.js"
import { TimestampColumn } from "./Columns.js"

/** A `webhook_events` row: one `sale.settled` delivery in the durable outbox. */
export const WebhookEventRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  sale_id: Schema.String,
  body: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_error: Schema.NullOr(Schema.String),
  created_at: TimestampColumn,
  first_attempt_at: Schema.NullOr(TimestampColumn),
  next_attempt_at: TimestampColumn
})

/** The row an event is written as: what `WebhookEventFromRow` encodes to, without re-checking the event. */
export const webhookEventToRow = (event: WebhookEvent | typeof WebhookEvent.Encoded): typeof WebhookEventRow.Type => ({
  id: event.id,
  account_id: event.accountId,
  sale_id: event.saleId,
  body: event.body,
  status: event.status,
  attempts: event.attempts,
  last_error: event.lastError,
  created_at: event.createdAt,
  first_attempt_at: event.firstAttemptAt,
  next_attempt_at: event.nextAttemptAt
})

export const WebhookEventFromRow = Schema.transform(WebhookEventRow, WebhookEvent, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    accountId: row.account_id,
    saleId: row.sale_id,
    body: row.body,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: row.created_at,
    firstAttemptAt: row.first_attempt_at,
    nextAttemptAt: row.next_attempt_at
  }),
  encode: webhookEventToRow
})

import { Schema } from "effect"
import { AccountId, EventId, SaleId } from "./Ids.js"

/**
 * Where a webhook event stands: waiting, delivered, given up after the delivery window, or cancelled because the
 * account removed its webhook.
 */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed", "cancelled")
/** One of `DeliveryStatus`'s values. */
export type DeliveryStatus = typeof DeliveryStatus.Type

/** Delivery policy decided in DECISIONS.md: about 30 s of retries, 5 s per attempt. */
export const DELIVERY_WINDOW_MS = 30_000
/** How long one delivery attempt may take before it counts as failed. */
export const ATTEMPT_TIMEOUT_MS = 5_000

/** A `sale.settled` event waiting in (or done with) the durable outbox. */
export class WebhookEvent extends Schema.Class<WebhookEvent>("WebhookEvent")({
  id: EventId,
  accountId: AccountId,
  saleId: SaleId,
  /** The exact JSON body that is signed and sent. */
  body: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  firstAttemptAt: Schema.NullOr(Schema.DateFromSelf),
  nextAttemptAt: Schema.DateFromSelf
}) {}

/** The newest of a sale's events (a redelivery backfill can add one), or null when it has none. */
export const latestEvent = (events: ReadonlyArray<WebhookEvent>): WebhookEvent | null =>
  events.reduce<WebhookEvent | null>((a, e) => (a === null || e.createdAt > a.createdAt ? e : a), null)

import { Context, type Effect, type Option } from "effect"
import type { AccountId, EventId, SaleId } from "../domain/Ids.js"
import type { WebhookEvent } from "../domain/WebhookEvent.js"
import type { StorageError } from "./StorageError.js"

/**
 * The durable queue of `sale.settled` deliveries. Several workers may claim at once; none gets the same event.
 * A settling sale's event is queued by `SaleLedger.settle`, atomically with the sale; `enqueue` queues one on
 * its own (a backfilled redelivery). Every method fails with `StorageError` when the store does.
 */
export class Outbox extends Context.Tag("repomarket/Outbox")<Outbox, {
  readonly enqueue: (event: WebhookEvent) => Effect.Effect<void, StorageError>
  /** Pending events due at `now`, leased to the caller until `leaseUntil` so no other worker takes them. */
  readonly claimDue: (now: Date, limit: number, leaseUntil: Date) => Effect.Effect<ReadonlyArray<WebhookEvent>, StorageError>
  readonly update: (event: WebhookEvent) => Effect.Effect<void, StorageError>
  /**
   * Stores the outcome of an attempt on an event claimed with lease `leaseUntil`, only if the event is still
   * pending under that lease. False, and nothing changed, when it was cancelled (the webhook removed),
   * reset by a redelivery or claimed again meanwhile: a late outcome never overwrites a newer decision.
   */
  readonly recordAttempt: (event: WebhookEvent, leaseUntil: Date) => Effect.Effect<boolean, StorageError>
  readonly findById: (id: EventId) => Effect.Effect<Option.Option<WebhookEvent>, StorageError>
  readonly findBySale: (saleId: SaleId) => Effect.Effect<ReadonlyArray<WebhookEvent>, StorageError>
  /** Marks the account's pending events cancelled (the webhook was removed). */
  readonly cancelPending: (accountId: AccountId) => Effect.Effect<number, StorageError>
}>() {}

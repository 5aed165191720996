import { Context, Effect, Layer, Option } from "effect"
import type { EventId } from "../../domain/Ids.js"
import { WebhookEvent } from "../../domain/WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"

/**
 * The memory outbox's events. SaleLedgerMemory shares them, so its `settle` can write the sale and queue
 * the event in one synchronous step, as atomic as the SQL statement (see StorageMemory).
 */
export class OutboxEvents extends Context.Tag("repomarket/OutboxEvents")<OutboxEvents, Map<EventId, WebhookEvent>>() {}

/** A fresh, empty `OutboxEvents` map. */
export const OutboxEventsMemory = Layer.sync(OutboxEvents, () => new Map<EventId, WebhookEvent>())

/** The Outbox in memory; needs OutboxEvents, which SaleLedgerMemory shares. */
export const OutboxMemory = Layer.effect(Outbox, Effect.gen(function*() {
  const events = yield* OutboxEvents
  return {
    enqueue: (event) => Effect.sync(() => void events.set(event.id, event)),
    claimDue: (now, limit, leaseUntil) =>
      Effect.sync(() => {
        const due = [...events.values()]
          .filter((e) => e.status === "pending" && e.nextAttemptAt <= now)
          .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime())
          .slice(0, limit)
        // The lease is the claim: a second worker sees the event as not due until the lease runs out.
        return due.map((e) => {
          events.set(e.id, new WebhookEvent({ ...e, nextAttemptAt: leaseUntil }))
          return e
        })
      }),
    update: (event) => Effect.sync(() => void events.set(event.id, event)),
    recordAttempt: (event, leaseUntil) =>
      Effect.sync(() => {
        const stored = events.get(event.id)
        if (stored?.status !== "pending" || stored.nextAttemptAt.getTime() !== leaseUntil.getTime()) return false
        events.set(event.id, event)
        return true
      }),
    findById: (id) => Effect.sync(() => Option.fromNullable(events.get(id))),
    findBySale: (saleId) => Effect.sync(() => [...events.values()].filter((e) => e.saleId === saleId)),
    cancelPending: (accountId) =>
      Effect.sync(() => {
        let n = 0
        for (const e of events.values()) {
          if (e.accountId === accountId && e.status === "pending") {
            events.set(e.id, new WebhookEvent({ ...e, status: "cancelled" }))
            n++
          }
        }
        return n
      })
  }
}))

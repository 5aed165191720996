import { Effect, Layer, Option } from "effect"
import type { EventId } from "../../domain/Ids.js"
import { WebhookEvent } from "../../domain/WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"

export const OutboxMemory = Layer.sync(Outbox, () => {
  const events = new Map<EventId, WebhookEvent>()
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
})

import { Cause, Duration, Effect, Layer } from "effect"
import { Webhooks } from "../../domain/usecases/Webhooks.js"

/** How long an idle worker waits before looking at the outbox again. */
export const IDLE_POLL = Duration.millis(250)

/**
 * The webhook delivery worker of the HTTP host: a fiber scoped to the server that drains the outbox while
 * there is work and polls gently when there is none. Delivery never runs on a buyer's request. Several
 * hosts may run it against one database: claims are leased, so no event is sent twice at once.
 */
export const DeliveryWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const pass = webhooks.deliverDue().pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("Webhook delivery pass failed", Cause.pretty(cause)), 0))
    )
    yield* Effect.forkScoped(
      Effect.forever(Effect.flatMap(pass, (n) => (n > 0 ? Effect.void : Effect.sleep(IDLE_POLL))))
    )
  })
)

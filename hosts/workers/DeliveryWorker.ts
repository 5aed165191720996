import { Cause, Duration, Effect, Layer } from "effect"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { workerLoop } from "./WorkerLoop.js"

/** How long an idle worker waits before looking at the outbox again. */
export const IDLE_POLL = Duration.millis(250)

/**
 * The webhook delivery worker of the HTTP host: a fiber scoped to the server that drains the outbox while
 * there is work and polls gently when there is none. Delivery never runs on a buyer's request. Several
 * hosts (and several processes of one host, `WORKERS`) may run it against one database: claims are leased
 * (`FOR UPDATE SKIP LOCKED`), so no event is sent twice at once. A stopping host claims nothing more and
 * lets the attempts in progress finish (see workerLoop).
 */
export const DeliveryWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const pass = webhooks.deliverDue().pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("Webhook delivery pass failed", Cause.pretty(cause)), 0))
    )
    yield* workerLoop(pass, (n) => (n > 0 ? Duration.zero : IDLE_POLL))
  })
)

import { Cause, type ConfigError, Duration, Effect, Layer, Option } from "effect"
import { Reconciler, type ReconcileOptions } from "../../domain/usecases/Reconciler.js"
import { FacilitatorTimeoutMs, SETTLE_TIMEOUT_MS } from "../../adapters/x402/FacilitatorHttp.js"
import { workerLoop } from "./WorkerLoop.js"

/** How often the Node host looks for pending sales to resolve from the chain. */
export const RECONCILE_EVERY = Duration.seconds(15)
/** Pending sales resolved per pass (oldest first); the rest wait for the next pass. */
export const RECONCILE_BATCH = 100

/**
 * Which pending sales a pass looks at: those older than twice the facilitator's settle timeout (60 s with
 * the default 30 s; at least 5 s), so a purchase still waiting for its settle answer is left to finish.
 */
export const reconcileOptions = (limit: number): Effect.Effect<ReconcileOptions, ConfigError.ConfigError> =>
  Effect.map(FacilitatorTimeoutMs, (timeoutMs) => ({
    grace: Duration.millis(Math.max(2 * Option.getOrElse(timeoutMs, () => SETTLE_TIMEOUT_MS), 5_000)),
    limit
  }))

/**
 * The Node host's reconciler: a fiber scoped to the server that resolves pending sales from the chain now
 * and every `every` (a sale it settles gets its `sale.settled` event queued for the DeliveryWorker). A
 * failing pass is logged and the next one runs on time; several hosts may run it over one database, as the
 * ledger moves a sale only once. A stopping host starts no new pass (see workerLoop).
 */
export const ReconcileWorker = (every: Duration.DurationInput = RECONCILE_EVERY) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const reconciler = yield* Reconciler
      const options = yield* reconcileOptions(RECONCILE_BATCH)
      const pass = reconciler.reconcilePending(options).pipe(
        Effect.tap((summary) => summary.checked > 0 ? Effect.logInfo("Reconcile pass", summary) : Effect.void),
        Effect.catchAllCause((cause) => Effect.logError("Reconcile pass failed", Cause.pretty(cause)))
      )
      yield* workerLoop(pass, () => every)
    })
  )

/** The Node host's reconciler at its default interval. */
export const ReconcileWorkerLive = ReconcileWorker()

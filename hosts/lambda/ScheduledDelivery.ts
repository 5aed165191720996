import { Cause, Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { Reconciler, type ReconcileOptions, type ReconcileSummary } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { ATTEMPT_TIMEOUT_MS } from "../../domain/WebhookEvent.js"
import { IDLE_POLL } from "../workers/DeliveryWorker.js"
import { reconcileOptions } from "../workers/ReconcileWorker.js"
import type { LambdaContext, ScheduledEvent } from "./Events.js"
import { perInstance } from "./PerInstance.js"

/** The ports webhook delivery and the reconciler need (a subset of the application's). */
export type DeliveryPorts =
  | Layer.Layer.Context<typeof Webhooks.Default>
  | Exclude<Layer.Layer.Context<typeof Reconciler.Default>, Settlements>
  | Layer.Layer.Context<typeof Settlements.Default>

/** Pending sales a scheduled run resolves (oldest first); the rest wait for the next minute. */
export const LAMBDA_RECONCILE_BATCH = 20
/** The most a run spends resolving pending sales before it delivers webhooks. */
export const RECONCILE_BUDGET_MS = 15_000

class ReconcileSettings extends Context.Tag("repomarket/ReconcileSettings")<ReconcileSettings, ReconcileOptions>() {}
const ReconcileSettingsLive = Layer.effect(ReconcileSettings, reconcileOptions(LAMBDA_RECONCILE_BATCH))

/** How long a scheduled delivery run goes on. */
export interface DeliveryOptions {
  /** Stop starting passes after this long (default 50 s: the schedule fires every minute). */
  readonly budgetMs?: number
  /**
   * After the outbox is found empty, keep polling this long since the last attempt (default 10 s): a failed
   * attempt is retried up to 8 s later (DeliveryPolicy), and those retries should not wait for the next
   * scheduled run, by which time the ~30 s window would be over.
   */
  readonly quietMs?: number
  /** Between two polls of an empty outbox (default: the HTTP host's worker's 250 ms). */
  readonly pollMs?: number
}

/**
 * Time kept back from the invocation's remaining time for the pass in flight: a pass sends every event it
 * claimed at once, each attempt limited to 5 s (ATTEMPT_TIMEOUT_MS), plus the outbox updates. The template's
 * timeout (70 s) covers the 50 s budget plus this.
 */
const PASS_RESERVE_MS = ATTEMPT_TIMEOUT_MS + 5_000

/** What a delivery run did. */
export interface DeliverySummary {
  /** How many `deliverDue` passes ran. */
  readonly passes: number
  /** Delivery attempts made (successful or not), as `deliverDue` counts them. */
  readonly attempted: number
  /** `idle`: nothing due and nothing recently attempted; `time_budget`: stopped with time running out. */
  readonly stoppedBecause: "idle" | "time_budget"
  /** How long the run took. */
  readonly elapsedMs: number
}

/** Runs `deliverDue` passes until the outbox is idle or the time budget is spent. */
export const deliverUntilIdle = (options: DeliveryOptions & { readonly remainingMs?: number } = {}) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const started = yield* Clock.currentTimeMillis
    const budget = Math.min(options.budgetMs ?? 50_000, (options.remainingMs ?? Infinity) - PASS_RESERVE_MS)
    const quiet = options.quietMs ?? 10_000
    const poll = options.pollMs ?? IDLE_POLL
    let passes = 0
    let attempted = 0
    let lastAttempt: number | null = null
    for (;;) {
      const n = yield* webhooks.deliverDue()
      const at = yield* Clock.currentTimeMillis
      passes++
      if (n > 0) {
        attempted += n
        lastAttempt = at
      }
      const summary = (stoppedBecause: DeliverySummary["stoppedBecause"]): DeliverySummary => ({ passes, attempted, stoppedBecause, elapsedMs: at - started })
      if (at - started >= budget) return summary("time_budget")
      if (n === 0) {
        if (lastAttempt === null || at - lastAttempt >= quiet) return summary("idle")
        yield* Effect.sleep(poll)
      }
    }
  })

/** What a scheduled run did: the reconcile step, then delivery. */
export interface ScheduledSummary extends DeliverySummary {
  /** What the reconcile step did first; null when it was skipped (too little time) or did not finish. */
  readonly reconciled: ReconcileSummary | null
}

/**
 * One reconcile pass before delivery (so an event it queues goes out in the same run), bounded by
 * `RECONCILE_BUDGET_MS` and by the invocation's remaining time; skipped when too little is left. Its failure
 * is logged and never stops delivery.
 */
const reconcileFirst = (remainingMs: number | undefined) =>
  Effect.gen(function*() {
    const budget = Math.min(RECONCILE_BUDGET_MS, (remainingMs ?? Infinity) - 2 * PASS_RESERVE_MS)
    if (budget <= 0) return null
    const reconciler = yield* Reconciler
    const options = yield* ReconcileSettings
    return yield* reconciler.reconcilePending(options).pipe(
      Effect.timeout(Duration.millis(budget)),
      Effect.tap((summary) => Effect.logInfo("Reconcile run", summary)),
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("Reconcile run failed or ran out of time", Cause.pretty(cause)), null))
    )
  })

/**
 * The scheduled Lambda handler (reconcile, then deliver webhooks), with `ready` to build it during init and
 * `dispose` to release its resources.
 */
export type ScheduledHandler = ((event: ScheduledEvent, context?: LambdaContext) => Promise<ScheduledSummary>) & {
  readonly ready: () => Promise<void>
  readonly dispose: () => Promise<void>
}

/**
 * The handler for the EventBridge schedule (rate(1 minute)) that resolves pending sales from the chain and
 * drains the webhook outbox: the Lambda counterpart of the HTTP host's ReconcileWorker and DeliveryWorker,
 * which cannot run between invocations. Events are leased
 * when claimed, so runs that overlap, or an instance killed mid-pass, never send an event twice at once.
 * A failed pass (database unreachable) fails the invocation, so it shows in the function's error metrics.
 */
export const makeScheduledHandler = <E>(ports: Layer.Layer<DeliveryPorts, E>, options: DeliveryOptions = {}): ScheduledHandler => {
  const useCases = Layer.mergeAll(
    Webhooks.Default,
    Reconciler.Default.pipe(Layer.provide(Settlements.Default)),
    ReconcileSettingsLive
  )
  const instance = perInstance(Layer.toRuntime(useCases.pipe(Layer.provide(ports))))
  const handler = async (_event: ScheduledEvent, context?: LambdaContext): Promise<ScheduledSummary> => {
    const runtime = await instance.get()
    const remaining = () => Option.fromNullable(context?.getRemainingTimeInMillis?.())
    const run = Effect.gen(function*() {
      const reconciled = yield* reconcileFirst(Option.getOrUndefined(remaining()))
      // Read again: the reconcile step used some of the invocation's time.
      const delivered = yield* Option.match(remaining(), {
        onNone: () => deliverUntilIdle(options),
        onSome: (remainingMs) => deliverUntilIdle({ ...options, remainingMs })
      }).pipe(
        Effect.tap((summary) => Effect.logInfo("Webhook delivery run", summary)),
        Effect.tapErrorCause((cause) => Effect.logError("Webhook delivery run failed", Cause.pretty(cause)))
      )
      return { ...delivered, reconciled } satisfies ScheduledSummary
    })
    return Effect.runPromise(Effect.provide(run, runtime))
  }
  return Object.assign(handler, { ready: () => instance.get().then(() => undefined), dispose: instance.dispose })
}

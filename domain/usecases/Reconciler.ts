import { Cause, Duration, Effect } from "effect"
import type { Sale } from "../Sale.js"
import { now } from "../rules/Tokens.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { Settlements } from "./Settlements.js"

export interface ReconcileOptions {
  /**
   * Only sales created longer ago than this are looked at: longer than a settle call may take, so a
   * purchase still waiting for its settle answer is not raced (racing it would be safe, only wasteful).
   */
  readonly grace: Duration.DurationInput
  /** At most this many sales per pass, oldest first. */
  readonly limit: number
  /** Sales resolved at once (each may make a few chain RPC calls). */
  readonly concurrency?: number
}

export interface ReconcileSummary {
  /** Pending sales looked at. */
  readonly checked: number
  readonly settled: number
  readonly failed: number
  /** Still pending: the chain says not yet, or nobody can tell. */
  readonly pending: number
  /** Sales whose resolution broke (logged and skipped; the next pass tries again). */
  readonly errors: number
}

/**
 * Resolves sales left pending by a settle whose outcome was never heard (timeout, 5xx, lost connection, a
 * host stopped mid-settle): each is asked of the chain through `Settlements.resolve`, which settles it (its
 * `sale.settled` event queued once), fails it past its `settleBy`, or leaves it pending. Run periodically by
 * each host: the Node server's worker, the Lambda schedule.
 */
export class Reconciler extends Effect.Service<Reconciler>()("usecases/Reconciler", {
  effect: Effect.gen(function*() {
    const ledger = yield* SaleLedger
    const settlements = yield* Settlements

    const resolveOne = (sale: Sale) =>
      settlements.resolve(sale).pipe(
        Effect.map((resolved) => resolved.status),
        Effect.tap((status) =>
          status === "pending" ? Effect.void : Effect.logInfo("Reconciled a pending sale", { sale_id: sale.id, status })
        ),
        // One sale's trouble (a storage defect) never stops the others.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.as(Effect.logWarning("Reconciling a pending sale failed", { sale_id: sale.id, cause: Cause.pretty(cause) }), "error" as const)
        )
      )

    const reconcilePending = Effect.fn("Reconciler.reconcilePending")(function*(options: ReconcileOptions) {
      const at = yield* now
      const createdBefore = new Date(at.getTime() - Duration.toMillis(Duration.decode(options.grace)))
      const sales = yield* ledger.listPending({ createdBefore, limit: options.limit })
      const outcomes = yield* Effect.forEach(sales, resolveOne, { concurrency: options.concurrency ?? 4 })
      const count = (status: string) => outcomes.filter((o) => o === status).length
      return {
        checked: sales.length,
        settled: count("settled"),
        failed: count("failed"),
        pending: count("pending"),
        errors: count("error")
      } satisfies ReconcileSummary
    })

    return { reconcilePending } as const
  })
}) {}

import { Cause, Duration, Effect, Ref } from "effect"
import type { SaleId } from "../Ids.js"
import type { Sale } from "../Sale.js"
import { now } from "../rules/Clock.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { Settlements } from "./Settlements.js"

/** How one reconciliation pass picks its sales. */
export interface ReconcileOptions {
  /**
   * Only sales created longer ago than this are looked at: longer than a settle call may take, so a
   * purchase still waiting for its settle answer is not raced (racing it would be safe, only wasteful).
   */
  readonly grace: Duration.DurationInput
  /**
   * At most this many sales per pass, oldest first; the next pass goes on after the last one looked at (and
   * starts over once it reaches the end), so sales that stay unresolvable never hide newer ones.
   */
  readonly limit: number
  /** Sales resolved at once (each may make a few chain RPC calls). */
  readonly concurrency?: number
}

/** What one reconciliation pass did. */
export interface ReconcileSummary {
  /** Pending sales looked at. */
  readonly checked: number
  /** Sales found settled on chain. */
  readonly settled: number
  /** Sales resolved as failed. */
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
export class Reconciler extends Effect.Service<Reconciler>()("repomarket/Reconciler", {
  effect: Effect.gen(function*() {
    const ledger = yield* SaleLedger
    const settlements = yield* Settlements
    // Where the next pass goes on: the last sale looked at, or none to start from the oldest.
    const position = yield* Ref.make<{ readonly createdAt: Date; readonly id: SaleId } | undefined>(undefined)

    const resolveOne = (sale: Sale) =>
      settlements.resolve(sale).pipe(
        Effect.map((resolved) => resolved.status),
        Effect.tap((status) =>
          status === "pending" ? Effect.void : Effect.logInfo("Reconciled a pending sale", { sale_id: sale.id, status })
        ),
        // One sale's trouble (a StorageError, a defect) never stops the others.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.as(Effect.logWarning("Reconciling a pending sale failed", { sale_id: sale.id, cause: Cause.pretty(cause) }), "error" as const)
        )
      )

    const reconcilePending = Effect.fn("Reconciler.reconcilePending")(function*(options: ReconcileOptions) {
      const at = yield* now
      const createdBefore = new Date(at.getTime() - Duration.toMillis(Duration.decode(options.grace)))
      const after = yield* Ref.get(position)
      const page = yield* ledger.listPending({ createdBefore, limit: options.limit, after })
      // Reached the end: start over from the oldest, in this same pass, up to the limit.
      const wrapped = after === undefined || page.length >= options.limit
        ? []
        : (yield* ledger.listPending({ createdBefore, limit: options.limit - page.length }))
          .filter((s) => !page.some((p) => p.id === s.id))
      const sales = [...page, ...wrapped]
      const last = sales[sales.length - 1]
      yield* Ref.set(position, sales.length < options.limit || last === undefined ? undefined : { createdAt: last.createdAt, id: last.id })
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

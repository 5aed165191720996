import { Effect } from "effect"
import type { Principal } from "../Credentials.js"
import type { Delivery } from "../Delivery.js"
import { InvalidInput } from "../Errors.js"
import type { Sale } from "../Sale.js"
import { latestEvent, type WebhookEvent } from "../WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"
import { SaleLedger, type SaleTotal } from "../../ports/SaleLedger.js"

/** The largest page of the seller's ledger. */
export const MAX_PAGE = 100
/** The ledger page size when none is asked. */
export const DEFAULT_PAGE = 25

/** One settled sale of the seller's ledger. */
export interface LedgerRow {
  /** The sale. */
  readonly sale: Sale
  /** The latest `sale.settled` event for it; null when no webhook was set when it settled. */
  readonly webhook: WebhookEvent | null
  /** The newer commits delivered for it within its update window, oldest first. */
  readonly updates: ReadonlyArray<Delivery>
}

/** One page of the seller's ledger. */
export interface LedgerPage {
  /** The sales of this page, newest first. */
  readonly rows: ReadonlyArray<LedgerRow>
  /** The cursor of the next page; null on the last one. */
  readonly nextCursor: string | null
  /** Settled totals per chain and mode over the whole ledger. */
  readonly totals: ReadonlyArray<SaleTotal>
}

/**
 * The seller's ledger of record: every settled sale, newest first, with what its webhook did and the updates
 * delivered for it after purchase.
 */
export class Dashboard extends Effect.Service<Dashboard>()("repomarket/Dashboard", {
  effect: Effect.gen(function*() {
    const ledger = yield* SaleLedger
    const outbox = yield* Outbox

    const sales = Effect.fn("Dashboard.sales")(function*(
      principal: Principal,
      options: { readonly livemode?: boolean | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
    ) {
      const limit = options.limit ?? DEFAULT_PAGE
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
        return yield* InvalidInput.forField("limit", `must be a whole number from 1 to ${MAX_PAGE}`)
      }
      if (options.cursor !== undefined && !/^[A-Za-z0-9_=-]{1,200}$/.test(options.cursor)) {
        return yield* InvalidInput.forField("cursor", "must be a cursor from a previous page")
      }
      const page = yield* ledger.listByAccount(principal.accountId, {
        status: "settled",
        limit,
        ...(options.livemode === undefined ? {} : { livemode: options.livemode }),
        ...(options.cursor === undefined ? {} : { cursor: options.cursor })
      })
      const updates = yield* ledger.listDeliveries(page.sales.filter((sale) => sale.updatesDays > 0).map((sale) => sale.id))
      const rows = yield* Effect.forEach(page.sales, (sale) =>
        Effect.map(outbox.findBySale(sale.id), (events): LedgerRow => ({
          sale,
          webhook: latestEvent(events),
          updates: updates.filter((d) => d.saleId === sale.id)
        })), { concurrency: 8 })
      const totals = yield* ledger.settledTotals(principal.accountId)
      return { rows, nextCursor: page.nextCursor, totals } satisfies LedgerPage
    })

    return { sales } as const
  })
}) {}

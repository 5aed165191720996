import { Effect } from "effect"
import type { Principal } from "../Credentials.js"
import { InvalidInput } from "../Errors.js"
import type { Sale } from "../Sale.js"
import { latestEvent, type WebhookEvent } from "../WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"
import { SaleLedger, type SaleTotal } from "../../ports/SaleLedger.js"

export const MAX_PAGE = 100
export const DEFAULT_PAGE = 25

export interface LedgerRow {
  readonly sale: Sale
  /** The latest `sale.settled` event for it; null when no webhook was set when it settled. */
  readonly webhook: WebhookEvent | null
}

export interface LedgerPage {
  readonly rows: ReadonlyArray<LedgerRow>
  readonly nextCursor: string | null
  readonly totals: ReadonlyArray<SaleTotal>
}

/** The seller's ledger of record: every settled sale, newest first, with what its webhook did. */
export class Dashboard extends Effect.Service<Dashboard>()("usecases/Dashboard", {
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
      const rows = yield* Effect.forEach(page.sales, (sale) =>
        Effect.map(outbox.findBySale(sale.id), (events): LedgerRow => ({
          sale,
          webhook: latestEvent(events)
        })), { concurrency: 8 })
      const totals = yield* ledger.settledTotals(principal.accountId)
      return { rows, nextCursor: page.nextCursor, totals } satisfies LedgerPage
    })

    return { sales } as const
  })
}) {}

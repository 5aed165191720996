import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { formatUsd } from "../../domain/Money.js"
import { Dashboard, type LedgerRow } from "../../domain/usecases/Dashboard.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../Security.js"
import type * as S from "../Schemas.js"
import { storageAsDefect } from "../Unavailable.js"

const saleView = ({ sale, updates, webhook }: LedgerRow): typeof S.SaleView.Type => ({
  id: sale.id,
  repo: sale.repo,
  amount_usd: formatUsd(sale.amount),
  amount: sale.amount.toString(),
  network: sale.network,
  asset: sale.asset,
  payer: sale.payer,
  transaction: sale.transaction,
  settled_at: (sale.settledAt ?? sale.createdAt).toISOString(),
  livemode: sale.livemode,
  commit: sale.commitSha,
  updates_days: sale.updatesDays,
  updates: updates.map((d) => ({ id: d.id, commit: d.commitSha, delivered_at: d.deliveredAt.toISOString() })),
  webhook: webhook === null
    ? { status: "none", attempts: 0, last_error: null }
    : { status: webhook.status, attempts: webhook.attempts, last_error: webhook.lastError }
})

export const SalesHandlers = HttpApiBuilder.group(Api, "sales", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* storageAsDefect(Dashboard)
    const webhooks = yield* storageAsDefect(Webhooks)
    return handlers
      .handle("listSales", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          dashboard.sales(p, {
            livemode: urlParams.livemode === undefined ? undefined : urlParams.livemode === "true",
            cursor: urlParams.cursor,
            limit: urlParams.limit
          })).pipe(
            Effect.map((page) => ({
              sales: page.rows.map(saleView),
              next_cursor: page.nextCursor,
              totals: page.totals.map((t) => ({
                chain: t.chain,
                livemode: t.livemode,
                amount_usd: formatUsd(t.amount),
                amount: t.amount.toString(),
                count: t.count
              }))
            }))
          ))
      .handle("redeliver", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (p) => webhooks.redeliver(p, path.id)).pipe(
          Effect.map((event) => ({ event_id: event.id, status: "pending" as const }))
        ))
  }))

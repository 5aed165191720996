import { formatUsd } from "../Money.js"
import type { Sale } from "../Sale.js"
import type { EventId } from "../Ids.js"

/** The `sale.settled` body of DECISIONS.md; serialised once, signed and sent as these exact bytes. */
export const saleSettledBody = (eventId: EventId, sale: Sale, created: Date): string =>
  JSON.stringify({
    id: eventId,
    type: "sale.settled",
    created: Math.floor(created.getTime() / 1000),
    livemode: sale.livemode,
    data: {
      sale_id: sale.id,
      repo: sale.repo,
      amount_usd: formatUsd(sale.amount),
      amount: sale.amount.toString(),
      asset: sale.asset,
      network: sale.network,
      payer: sale.payer,
      transaction: sale.transaction
    }
  })

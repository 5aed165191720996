import { formatUsd } from "../Money.js"
import type { ArchiveDigest } from "../ReceiptClaims.js"
import type { Sale } from "../Sale.js"
import type { EventId } from "../Ids.js"

/**
 * The `sale.settled` body of DECISIONS.md; serialised once, signed and sent as these exact bytes. Beside the
 * payment it names what was sold (issue 30): the `commit`, the `archive` (`{ sha256, size }`, null when not
 * known at settlement) and the signed `receipt` (the JWS the buyer's download carries; null when none).
 */
export const saleSettledBody = (
  eventId: EventId,
  sale: Sale,
  created: Date,
  delivery: { readonly archive: ArchiveDigest | null; readonly receipt: string | null } = { archive: null, receipt: null }
): string =>
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
      transaction: sale.transaction,
      commit: sale.commitSha,
      archive: delivery.archive === null ? null : { sha256: delivery.archive.sha256, size: delivery.archive.size },
      receipt: delivery.receipt
    }
  })

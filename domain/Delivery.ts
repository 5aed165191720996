import { Schema } from "effect"
import { DeliveryId, SaleId } from "./Ids.js"

/**
 * A newer commit delivered for a settled sale within its update window (`Sale.updatesDays`), without a new
 * payment: the ledger's record of an update. One per sale and commit (asking again for the same commit answers
 * the same delivery, with the same receipt). The purchase's own commit is the sale itself, never a delivery.
 */
export class Delivery extends Schema.Class<Delivery>("Delivery")({
  id: DeliveryId,
  saleId: SaleId,
  /** The commit delivered (40 hex digits): the head of the listing's default branch when it was asked for. */
  commitSha: Schema.String,
  deliveredAt: Schema.DateFromSelf
}) {}

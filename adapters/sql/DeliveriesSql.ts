import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Delivery } from "../../domain/Delivery.js"
import { DeliveryId, SaleId } from "../../domain/Ids.js"
import type { SaleLedger } from "../../ports/SaleLedger.js"
import { TimestampColumn } from "./Columns.js"
import { orStorageError } from "./StorageErrors.js"

/** A `deliveries` row: one update delivered for a sale (migration 0009). */
const DeliveryFromRow = Schema.transform(
  Schema.Struct({ id: Schema.String, sale_id: Schema.String, commit_sha: Schema.String, delivered_at: TimestampColumn }),
  Schema.typeSchema(Delivery),
  {
    strict: true,
    decode: (row) => new Delivery({ id: DeliveryId.make(row.id), saleId: SaleId.make(row.sale_id), commitSha: row.commit_sha, deliveredAt: row.delivered_at }),
    encode: (d) => ({ id: d.id, sale_id: d.saleId, commit_sha: d.commitSha, delivered_at: d.deliveredAt })
  }
)

/** The SaleLedger's update deliveries on PostgreSQL (or PGlite); one per (sale, commit) by a unique constraint. */
export const makeDeliveriesSql = (
  sql: SqlClient.SqlClient
): Pick<SaleLedger["Type"], "recordDelivery" | "findDelivery" | "listDeliveries"> => {
  const findOne = SqlSchema.findOne({
    Request: Schema.Struct({ saleId: Schema.String, commitSha: Schema.String }),
    Result: DeliveryFromRow,
    execute: ({ commitSha, saleId }) => sql`SELECT * FROM deliveries WHERE sale_id = ${saleId} AND commit_sha = ${commitSha}`
  })
  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: DeliveryFromRow,
    execute: (id) => sql`SELECT * FROM deliveries WHERE id = ${id}`
  })
  const listBySales = SqlSchema.findAll({
    Request: Schema.Array(Schema.String),
    Result: DeliveryFromRow,
    execute: (ids) => sql`SELECT * FROM deliveries WHERE sale_id IN ${sql.in(ids)} ORDER BY sale_id, delivered_at, id`
  })
  // ON CONFLICT waits for a concurrent insert of the same (sale, commit) to commit; the SELECT then sees it.
  const recordDelivery = (delivery: Delivery) =>
    sql<{ id: string }>`INSERT INTO deliveries (id, sale_id, commit_sha, delivered_at)
        VALUES (${delivery.id}, ${delivery.saleId}, ${delivery.commitSha}, ${delivery.deliveredAt})
        ON CONFLICT (sale_id, commit_sha) DO NOTHING RETURNING id`.pipe(
      Effect.flatMap((rows) =>
        rows.length === 1
          ? Effect.succeed({ delivery, created: true })
          : Effect.map(Effect.flatten(findOne({ saleId: delivery.saleId, commitSha: delivery.commitSha })), (stored) => ({ delivery: stored, created: false }))
      ),
      Effect.retry({ times: 3, while: (e) => e._tag === "NoSuchElementException" }),
      orStorageError
    )
  return {
    recordDelivery,
    findDelivery: (id) => findById(id).pipe(orStorageError),
    listDeliveries: (saleIds) => saleIds.length === 0 ? Effect.succeed([]) : listBySales(saleIds).pipe(orStorageError)
  }
}

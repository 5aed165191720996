import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SaleLedger } from "../../ports/SaleLedger.js"
import { BigIntColumn } from "./Columns.js"
import { orStorageError } from "./StorageErrors.js"

/** A `delivered_archives` row's digest (migration 0010); the size is an int8, read exactly and handed out as a number. */
const DigestFromRow = Schema.transform(
  Schema.Struct({ sha256: Schema.String, size: BigIntColumn }),
  Schema.Struct({ sha256: Schema.String, size: Schema.Number }),
  {
    strict: true,
    decode: (row) => ({ sha256: row.sha256, size: Number(row.size) }),
    encode: (d) => ({ sha256: d.sha256, size: BigInt(d.size) })
  }
)

/** The SaleLedger's delivered archives on PostgreSQL (or PGlite): one per receipt, the first kept. */
export const makeDeliveredArchivesSql = (sql: SqlClient.SqlClient): Pick<SaleLedger["Type"], "recordDigest" | "findDigest"> => {
  const findOne = SqlSchema.findOne({
    Request: Schema.String,
    Result: DigestFromRow,
    execute: (receipt) => sql`SELECT sha256, size FROM delivered_archives WHERE receipt_id = ${receipt}`
  })
  return {
    recordDigest: ({ deliveryId, digest, saleId }) =>
      sql<{ receipt_id: string }>`INSERT INTO delivered_archives (receipt_id, sale_id, delivery_id, sha256, size)
          VALUES (${deliveryId ?? saleId}, ${saleId}, ${deliveryId}, ${digest.sha256}, ${String(digest.size)})
          ON CONFLICT (receipt_id) DO NOTHING RETURNING receipt_id`.pipe(
        Effect.map((rows) => rows.length === 1),
        orStorageError
      ),
    findDigest: (receipt) => findOne(receipt).pipe(orStorageError)
  }
}

import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { AccountId, SaleId } from "../../domain/Ids.js"
import type { Sale, SaleStatus } from "../../domain/Sale.js"
import type { WebhookEvent } from "../../domain/WebhookEvent.js"
import type { Chain } from "../../domain/Wallet.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { decodeCursor, encodeCursor, type SaleCursor, SaleFromRow, saleToRow } from "./SaleRow.js"
import { webhookEventToRow } from "./WebhookEventRow.js"
import { orStorageError } from "./StorageErrors.js"
import { makeDeliveriesSql } from "./DeliveriesSql.js"
import { makeDeliveredArchivesSql } from "./DeliveredArchivesSql.js"

/** The SaleLedger on PostgreSQL (or PGlite); one sale per payment key, enforced by a unique constraint. */
export const SaleLedgerSql = Layer.effect(
  SaleLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * False when a sale with the same payment key exists (the unique constraint decides, not a pre-check).
     * What was inserted is the sale itself, so only its id comes back.
     */
    const insertIfNew = (sale: Sale) =>
      sql<{ id: string }>`INSERT INTO sales ${sql.insert(saleToRow(sale))} ON CONFLICT (payment_key) DO NOTHING RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1)
      )
    const findByPaymentKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: SaleFromRow,
      execute: (key) => sql`SELECT * FROM sales WHERE payment_key = ${key}`
    })
    const findById = SqlSchema.findOne({
      Request: SaleId,
      Result: SaleFromRow,
      execute: (id) => sql`SELECT * FROM sales WHERE id = ${id}`
    })
    const findByPaymentId = SqlSchema.findOne({
      Request: Schema.Struct({ network: Schema.String, payer: Schema.String, digest: Schema.String }),
      Result: SaleFromRow,
      execute: ({ digest, network, payer }) =>
        sql`SELECT * FROM sales WHERE network = ${network} AND payer = ${payer} AND payment_id_digest = ${digest}`
    })
    // `lower(payer)` narrows through the index of migration 0007; a Solana address must then also match exactly.
    const findSettledByPayer = SqlSchema.findOne({
      Request: Schema.Struct({ listingId: Schema.String, livemode: Schema.Boolean, chain: Schema.String, payer: Schema.String }),
      Result: SaleFromRow,
      execute: ({ chain, listingId, livemode, payer }) =>
        sql`SELECT * FROM sales
            WHERE listing_id = ${listingId} AND lower(payer) = lower(${payer}) AND status = 'settled'
              AND livemode = ${livemode} AND chain = ${chain} AND (chain = 'base' OR payer = ${payer})
            ORDER BY settled_at DESC, id DESC LIMIT 1`
    })
    const listPending = SqlSchema.findAll({
      Request: Schema.Struct({
        createdBefore: Schema.DateFromSelf,
        limit: Schema.Number,
        after: Schema.optional(Schema.Struct({ createdAt: Schema.DateFromSelf, id: Schema.String }))
      }),
      Result: SaleFromRow,
      execute: ({ after, createdBefore, limit }) =>
        sql`SELECT * FROM sales WHERE status = 'pending' AND created_at < ${createdBefore}
            ${after === undefined ? sql`` : sql`AND (created_at, id) > (${after.createdAt}::timestamptz, ${after.id})`}
            ORDER BY created_at, id LIMIT ${Math.max(0, Math.floor(limit))}`
    })
    // Only a pending sale moves, decided by the UPDATE's own WHERE: no read-then-write race.
    const markFailed = (id: SaleId, reason: string) =>
      sql<{ id: string }>`UPDATE sales SET status = 'failed', failure_reason = ${reason}
                          WHERE id = ${id} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1))
    const noteRefusal = (id: SaleId, reason: string) =>
      sql<{ id: string }>`UPDATE sales SET failure_reason = ${reason}
                          WHERE id = ${id} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length === 1))
    // One statement, so atomic without a transaction. The event is inserted from the UPDATE's RETURNING: no
    // pending sale, no event. A repeated event id breaks the primary key and fails the whole statement.
    const settle = (sale: Sale, event: Option.Option<WebhookEvent>) => {
      const update = sql`UPDATE sales SET ${sql.update(saleToRow(sale), ["id"])} WHERE id = ${sale.id} AND status = 'pending'`
      if (Option.isNone(event)) return sql<{ id: string }>`${update} RETURNING id`
      const entries = Object.entries(webhookEventToRow(event.value))
      const columns = sql.csv(entries.map(([column]) => sql`${sql(column)}`))
      const values = sql.csv(entries.map(([, value]) => sql`${value}`))
      return sql<{ id: string }>`WITH settled AS (${update} RETURNING id)
                 INSERT INTO webhook_events (${columns}) SELECT ${values} FROM settled RETURNING sale_id AS id`
    }
    const page = (
      accountId: AccountId,
      livemode: boolean | undefined,
      status: SaleStatus | undefined,
      after: SaleCursor | undefined,
      take: number
    ) =>
      sql`SELECT * FROM sales
          WHERE account_id = ${accountId}
          ${livemode === undefined ? sql`` : sql`AND livemode = ${livemode}`}
          ${status === undefined ? sql`` : sql`AND status = ${status}`}
          ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id})`}
          ORDER BY created_at DESC, id DESC
          LIMIT ${take}`
    const decodeSales = Schema.decodeUnknown(Schema.Array(SaleFromRow))

    // ON CONFLICT waits for a concurrent insert of the same key to commit; the SELECT that follows is a new
    // statement and sees it. So of any number of concurrent callers exactly one gets `created: true`.
    const recordPending = (sale: Sale) =>
      insertIfNew(sale).pipe(
        Effect.flatMap((created) =>
          created
            ? Effect.succeed({ sale, created: true })
            : Effect.map(Effect.flatten(findByPaymentKey(sale.paymentKey)), (stored) => ({ sale: stored, created: false }))
        ),
        // The conflicting insert rolled back after all: try again.
        Effect.retry({ times: 3, while: (e) => e._tag === "NoSuchElementException" }),
        orStorageError
      )

    const listByAccount = (
      accountId: AccountId,
      options: { readonly livemode?: boolean; readonly status?: SaleStatus; readonly cursor?: string; readonly limit: number }
    ) => {
      const limit = Math.max(0, Math.floor(options.limit))
      const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
      // One row more than asked tells whether an older page exists.
      return page(accountId, options.livemode, options.status, after, limit + 1).pipe(
        Effect.flatMap(decodeSales),
        Effect.map((rows) => {
          const sales = rows.slice(0, limit)
          const last = sales[sales.length - 1]
          return { sales, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null }
        }),
        orStorageError
      )
    }

    return {
      ...makeDeliveriesSql(sql),
      ...makeDeliveredArchivesSql(sql),
      recordPending,
      markFailed: (id, reason) => markFailed(id, reason).pipe(orStorageError),
      noteRefusal: (id, reason) => noteRefusal(id, reason).pipe(orStorageError),
      settle: (sale, event) => settle(sale, event).pipe(Effect.map((rows) => rows.length === 1), orStorageError),
      findByPaymentId: (network, payer, digest) => findByPaymentId({ network, payer, digest }).pipe(orStorageError),
      findSettledByPayer: (query) => findSettledByPayer(query).pipe(orStorageError),
      listPending: ({ after, createdBefore, limit }) =>
        listPending(after === undefined ? { createdBefore, limit } : { createdBefore, limit, after }).pipe(orStorageError),
      findById: (id) => findById(id).pipe(orStorageError),
      findByPaymentKey: (key) => findByPaymentKey(key).pipe(orStorageError),
      listByAccount,
      settledTotals: (accountId) =>
        sql<{ chain: string; livemode: boolean; amount: string; count: string }>`
          SELECT chain, livemode, SUM(amount)::text AS amount, COUNT(*)::text AS count
          FROM sales WHERE account_id = ${accountId} AND status = 'settled'
          GROUP BY chain, livemode ORDER BY chain, livemode`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({ chain: r.chain as Chain, livemode: r.livemode, amount: BigInt(r.amount), count: Number(r.count) }))
          ),
          orStorageError
        )
    }
  })
)

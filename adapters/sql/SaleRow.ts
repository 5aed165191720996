import { Schema } from "effect"
import { Sale, SaleStatus } from "../../domain/Sale.js"
import { Chain } from "../../domain/Wallet.js"
import { BigIntColumn, TimestampColumn } from "./Columns.js"

/** A `sales` row: the ledger of record. `amount` is int8 atomic units, converted exactly. */
export const SaleRow = Schema.Struct({
  id: Schema.String,
  payment_key: Schema.String,
  listing_id: Schema.String,
  checkout_id: Schema.String,
  account_id: Schema.NullOr(Schema.String),
  repo: Schema.String,
  livemode: Schema.Boolean,
  chain: Chain,
  network: Schema.String,
  asset: Schema.String,
  amount: BigIntColumn,
  pay_to: Schema.String,
  payer: Schema.String,
  commit_sha: Schema.NullOr(Schema.String),
  transaction: Schema.NullOr(Schema.String),
  status: SaleStatus,
  failure_reason: Schema.NullOr(Schema.String),
  created_at: TimestampColumn,
  settled_at: Schema.NullOr(TimestampColumn),
  payment_id_digest: Schema.NullOr(Schema.String),
  settle_by: Schema.NullOr(TimestampColumn),
  updates_days: Schema.Int
})

/**
 * The row a sale is written as: what `SaleFromRow` encodes to, without re-checking a `Sale` (its constructor
 * checked it). The ledger writes with this on every purchase, where encoding through the schema cost ~3 % of
 * the purchase's CPU.
 */
export const saleToRow = (sale: Sale | typeof Sale.Encoded): typeof SaleRow.Type => ({
  id: sale.id,
  payment_key: sale.paymentKey,
  listing_id: sale.listingId,
  checkout_id: sale.checkoutId,
  account_id: sale.accountId,
  repo: sale.repo,
  livemode: sale.livemode,
  chain: sale.chain,
  network: sale.network,
  asset: sale.asset,
  amount: sale.amount,
  pay_to: sale.payTo,
  payer: sale.payer,
  commit_sha: sale.commitSha,
  transaction: sale.transaction,
  status: sale.status,
  failure_reason: sale.failureReason,
  created_at: sale.createdAt,
  settled_at: sale.settledAt,
  payment_id_digest: sale.paymentIdDigest ?? null,
  settle_by: sale.settleBy ?? null,
  updates_days: sale.updatesDays ?? 0
})

export const SaleFromRow = Schema.transform(SaleRow, Sale, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    paymentKey: row.payment_key,
    listingId: row.listing_id,
    checkoutId: row.checkout_id,
    accountId: row.account_id,
    repo: row.repo,
    livemode: row.livemode,
    chain: row.chain,
    network: row.network,
    asset: row.asset,
    amount: row.amount,
    payTo: row.pay_to,
    payer: row.payer,
    commitSha: row.commit_sha,
    transaction: row.transaction,
    status: row.status,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    settledAt: row.settled_at,
    paymentIdDigest: row.payment_id_digest,
    settleBy: row.settle_by,
    updatesDays: row.updates_days
  }),
  encode: saleToRow
})

/** The position after a sale in the newest-first order `(created_at DESC, id DESC)`. */
export interface SaleCursor {
  readonly createdAt: Date
  readonly id: string
}

const CursorJson = Schema.parseJson(Schema.Tuple(Schema.Int, Schema.String))

/** Opaque to callers: base64url of `[createdAt ms, id]`. Timestamps are written from JS Dates, so ms is exact. */
export const encodeCursor = (sale: Sale): string =>
  Buffer.from(JSON.stringify([sale.createdAt.getTime(), sale.id])).toString("base64url")

/** Undefined for a cursor this adapter did not issue; the caller then starts from the newest sale. */
export const decodeCursor = (cursor: string): SaleCursor | undefined => {
  const decoded = Schema.decodeUnknownOption(CursorJson)(Buffer.from(cursor, "base64url").toString("utf8"))
  if (decoded._tag === "None") return undefined
  const [ms, id] = decoded.value
  const createdAt = new Date(ms)
  return Number.isNaN(createdAt.getTime()) ? undefined : { createdAt, id }
}

import { Schema } from "effect"
import { Checkout } from "../../domain/Checkout.js"
import { Listing, ListingStatus } from "../../domain/Listing.js"
import { BigIntColumn, TimestampColumn } from "./Columns.js"

/** A `listings` row as node-postgres returns it; the repo and wallets are flattened into columns. */
export const ListingRow = Schema.Struct({
  id: Schema.String,
  owner: Schema.String,
  name: Schema.String,
  account_id: Schema.NullOr(Schema.String),
  host_url: Schema.String,
  is_private: Schema.Boolean,
  description: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  price: Schema.NullOr(BigIntColumn),
  wallet_base: Schema.NullOr(Schema.String),
  wallet_solana: Schema.NullOr(Schema.String),
  host_pat: Schema.NullOr(Schema.String),
  checkout_id: Schema.String,
  status: ListingStatus,
  created_at: TimestampColumn,
  updated_at: TimestampColumn,
  taken_down_at: Schema.NullOr(TimestampColumn),
  /** The update window in days (migration 0008; 0 for rows from before it). */
  updates_days: Schema.Number
})

export const ListingFromRow = Schema.transform(ListingRow, Listing, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    repo: { owner: row.owner, name: row.name },
    accountId: row.account_id,
    hostUrl: row.host_url,
    isPrivate: row.is_private,
    description: row.description,
    language: row.language,
    price: row.price,
    payTo: { base: row.wallet_base, solana: row.wallet_solana },
    hostPat: row.host_pat,
    checkoutId: row.checkout_id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    takenDownAt: row.taken_down_at,
    updatesDays: row.updates_days
  }),
  encode: (listing) => ({
    id: listing.id,
    owner: listing.repo.owner,
    name: listing.repo.name,
    account_id: listing.accountId,
    host_url: listing.hostUrl,
    is_private: listing.isPrivate,
    description: listing.description,
    language: listing.language,
    price: listing.price,
    wallet_base: listing.payTo.base,
    wallet_solana: listing.payTo.solana,
    host_pat: listing.hostPat,
    checkout_id: listing.checkoutId,
    status: listing.status,
    created_at: listing.createdAt,
    updated_at: listing.updatedAt,
    taken_down_at: listing.takenDownAt,
    updates_days: listing.updatesDays ?? 0
  })
})

/** A `checkouts` row: the snapshot of terms a buyer pays against. */
export const CheckoutRow = Schema.Struct({
  id: Schema.String,
  listing_id: Schema.String,
  owner: Schema.String,
  name: Schema.String,
  price: Schema.NullOr(BigIntColumn),
  wallet_base: Schema.NullOr(Schema.String),
  wallet_solana: Schema.NullOr(Schema.String),
  created_at: TimestampColumn,
  voided_at: Schema.NullOr(TimestampColumn)
})

export const CheckoutFromRow = Schema.transform(CheckoutRow, Checkout, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    listingId: row.listing_id,
    repo: { owner: row.owner, name: row.name },
    price: row.price,
    payTo: { base: row.wallet_base, solana: row.wallet_solana },
    createdAt: row.created_at,
    voidedAt: row.voided_at
  }),
  encode: (checkout) => ({
    id: checkout.id,
    listing_id: checkout.listingId,
    owner: checkout.repo.owner,
    name: checkout.repo.name,
    price: checkout.price,
    wallet_base: checkout.payTo.base,
    wallet_solana: checkout.payTo.solana,
    created_at: checkout.createdAt,
    voided_at: checkout.voidedAt
  })
})

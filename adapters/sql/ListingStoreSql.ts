import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import type { Checkout } from "../../domain/Checkout.js"
import { AccountId, CheckoutId, ListingId } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { ListingStore, LiveListingExists } from "../../ports/ListingStore.js"
import type { StorageError } from "../../ports/StorageError.js"
import { isUniqueViolation, TimestampColumn } from "./Columns.js"
import { CheckoutFromRow, ListingFromRow, ListingRow } from "./ListingRows.js"
import { fromSqlError, orStorageError } from "./StorageErrors.js"

/** The partial unique index that keeps one live listing per repo (see migration 0001). */
const ONE_LIVE_PER_REPO = "listings_one_live_per_repo"

/**
 * A checkout joined with its listing comes back as one flat row: the checkout's own columns, then each
 * listing column as `"listing.<column>"`, so the two tables' like-named columns (id, owner, price, ...)
 * do not collide. All listing columns are null when the listing is missing.
 */
const JOINED = "listing."
const LISTING_COLUMNS = Object.keys(ListingRow.fields)

/** Splits a joined row back into the two rows the existing row schemas decode. */
const splitJoined = (row: Record<string, unknown>) => {
  const checkout: Record<string, unknown> = {}
  const listing: Record<string, unknown> = {}
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith(JOINED)) listing[column.slice(JOINED.length)] = value
    else checkout[column] = value
  }
  return { checkout, listing: listing["id"] === null || listing["id"] === undefined ? null : listing }
}

/** The ListingStore on PostgreSQL (or PGlite) through `@effect/sql`. */
export const ListingStoreSql = Layer.effect(
  ListingStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findLive = SqlSchema.findOne({
      Request: Schema.Struct({ owner: Schema.String, name: Schema.String }),
      Result: ListingFromRow,
      execute: ({ name, owner }) =>
        sql`SELECT * FROM listings
            WHERE lower(owner) = lower(${owner}) AND lower(name) = lower(${name}) AND status = 'live'`
    })
    const findById = SqlSchema.findOne({
      Request: ListingId,
      Result: ListingFromRow,
      execute: (id) => sql`SELECT * FROM listings WHERE id = ${id}`
    })
    const findByIdForUpdate = SqlSchema.findOne({
      Request: ListingId,
      Result: ListingFromRow,
      execute: (id) => sql`SELECT * FROM listings WHERE id = ${id} FOR UPDATE`
    })
    const listByAccount = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: AccountId, includeTakenDown: Schema.Boolean }),
      Result: ListingFromRow,
      execute: ({ accountId, includeTakenDown }) =>
        sql`SELECT * FROM listings
            WHERE account_id = ${accountId} ${includeTakenDown ? sql`` : sql`AND status = 'live'`}
            ORDER BY created_at DESC, id DESC`
    })
    const listLiveByOwner = SqlSchema.findAll({
      Request: Schema.String,
      Result: ListingFromRow,
      execute: (owner) =>
        sql`SELECT * FROM listings WHERE lower(owner) = lower(${owner}) AND status = 'live'
            ORDER BY created_at DESC, id DESC`
    })
    const listSelling = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ owner: Schema.String, name: Schema.String, updatedAt: TimestampColumn }),
      // Code-point order ("C"), the same on every server whatever its default collation, and the memory adapter's.
      execute: () =>
        sql`SELECT owner, name, updated_at AS "updatedAt" FROM listings
            WHERE status = 'live' AND price IS NOT NULL AND (wallet_base IS NOT NULL OR wallet_solana IS NOT NULL)
            ORDER BY lower(owner) COLLATE "C", lower(name) COLLATE "C"`
    })
    const insert = SqlSchema.void({
      Request: ListingFromRow,
      execute: (row) => sql`INSERT INTO listings ${sql.insert(row)}`
    })
    const update = SqlSchema.void({
      Request: ListingFromRow,
      execute: (row) => sql`UPDATE listings SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
    })
    const insertCheckout = SqlSchema.void({
      Request: CheckoutFromRow,
      execute: (row) => sql`INSERT INTO checkouts ${sql.insert(row)}`
    })
    const listingColumns = sql.literal(LISTING_COLUMNS.map((column) => `l.${column} AS "${JOINED}${column}"`).join(", "))
    const findCheckoutWithListing = SqlSchema.findOne({
      Request: CheckoutId,
      Result: Schema.Struct({ checkout: CheckoutFromRow, listing: Schema.OptionFromNullOr(ListingFromRow) }),
      execute: (id) =>
        sql<Record<string, unknown>>`SELECT c.*, ${listingColumns}
            FROM checkouts c LEFT JOIN listings l ON l.id = c.listing_id
            WHERE c.id = ${id}`.pipe(Effect.map((rows) => rows.map(splitJoined)))
    })
    const voidCheckout = SqlSchema.void({
      Request: Schema.Struct({ id: CheckoutId, at: TimestampColumn }),
      // `voided_at IS NULL` keeps the first voiding time.
      execute: ({ at, id }) => sql`UPDATE checkouts SET voided_at = ${at} WHERE id = ${id} AND voided_at IS NULL`
    })

    return {
      findLive: (owner, name) => findLive({ owner, name }).pipe(orStorageError),
      findById: (id) => findById(id).pipe(orStorageError),
      findByIdForUpdate: (id) => findByIdForUpdate(id).pipe(orStorageError),
      listByAccount: (accountId, { includeTakenDown }) =>
        listByAccount({ accountId, includeTakenDown }).pipe(orStorageError),
      listLiveByOwner: (owner) => listLiveByOwner(owner).pipe(orStorageError),
      listSelling: () => listSelling(undefined).pipe(orStorageError),
      // Its own savepoint inside a transaction: a caller may catch LiveListingExists and go on, which an
      // aborted PostgreSQL transaction would not allow.
      insert: (listing: Listing) =>
        sql.withTransaction(insert(listing)).pipe(
          Effect.catchTag("SqlError", (error): Effect.Effect<never, LiveListingExists | StorageError> =>
            isUniqueViolation(error, ONE_LIVE_PER_REPO)
              ? Effect.fail(new LiveListingExists({ repo: listing.repo.slug }))
              : Effect.fail(fromSqlError(error))),
          Effect.catchTag("ParseError", Effect.die)
        ),
      update: (listing) => update(listing).pipe(orStorageError),
      insertCheckout: (checkout: Checkout) => insertCheckout(checkout).pipe(orStorageError),
      findCheckoutWithListing: (id) => findCheckoutWithListing(id).pipe(orStorageError),
      voidCheckout: (id, at) => voidCheckout({ id, at }).pipe(orStorageError)
    }
  })
)

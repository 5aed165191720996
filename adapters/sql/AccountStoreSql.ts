import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { Account } from "../../domain/Account.js"
import { AccountId } from "../../domain/Ids.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { TimestampColumn } from "./Columns.js"
import type { StorageError } from "../../ports/StorageError.js"
import { orStorageError } from "./StorageErrors.js"

/** An `accounts` row; the default wallets are two nullable columns. */
export const AccountRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  storefront_tagline: Schema.NullOr(Schema.String),
  webhook_url: Schema.NullOr(Schema.String),
  webhook_secret: Schema.NullOr(Schema.String),
  wallet_base: Schema.NullOr(Schema.String),
  wallet_solana: Schema.NullOr(Schema.String),
  host_login: Schema.NullOr(Schema.String),
  host_token: Schema.NullOr(Schema.String),
  created_at: TimestampColumn
})

export const AccountFromRow = Schema.transform(AccountRow, Account, {
  strict: true,
  decode: (row) => ({
    id: row.id,
    email: row.email,
    storefrontTagline: row.storefront_tagline,
    webhookUrl: row.webhook_url,
    webhookSecret: row.webhook_secret,
    wallets: { base: row.wallet_base, solana: row.wallet_solana },
    hostLogin: row.host_login,
    hostToken: row.host_token,
    createdAt: row.created_at
  }),
  encode: (account) => ({
    id: account.id,
    email: account.email,
    storefront_tagline: account.storefrontTagline,
    webhook_url: account.webhookUrl,
    webhook_secret: account.webhookSecret,
    wallet_base: account.wallets.base,
    wallet_solana: account.wallets.solana,
    host_login: account.hostLogin,
    host_token: account.hostToken ?? null,
    created_at: account.createdAt
  })
})

/** The AccountStore on PostgreSQL (or PGlite) through `@effect/sql`. */
export const AccountStoreSql = Layer.effect(
  AccountStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: AccountId,
      Result: AccountFromRow,
      execute: (id) => sql`SELECT * FROM accounts WHERE id = ${id}`
    })
    const findByIdForUpdate = SqlSchema.findOne({
      Request: AccountId,
      Result: AccountFromRow,
      execute: (id) => sql`SELECT * FROM accounts WHERE id = ${id} FOR UPDATE`
    })
    const findByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: AccountFromRow,
      execute: (email) => sql`SELECT * FROM accounts WHERE email = ${email}`
    })
    const findByHostLogin = SqlSchema.findAll({
      Request: Schema.String,
      Result: AccountFromRow,
      execute: (login) =>
        sql`SELECT * FROM accounts WHERE lower(host_login) = lower(${login}) ORDER BY created_at, id`
    })
    /** Inserts unless the email is taken; an empty result means another account holds the email. */
    const insertIfNew = SqlSchema.findOne({
      Request: AccountFromRow,
      Result: AccountFromRow,
      execute: (row) =>
        sql`INSERT INTO accounts ${sql.insert(row)} ON CONFLICT (email) DO NOTHING RETURNING *`
    })
    const update = SqlSchema.void({
      Request: AccountFromRow,
      execute: (row) => sql`UPDATE accounts SET ${sql.update(row, ["id"])} WHERE id = ${row.id}`
    })

    // ON CONFLICT waits for a concurrent insert of the same email to commit, and the SELECT that follows is
    // a new statement with a fresh snapshot, so it sees that row: exactly one account per email, race-free.
    // Should the other insert roll back instead, the row is missing and the insert is tried again.
    const insertOrGet = (account: Account): Effect.Effect<Account, StorageError> =>
      insertIfNew(account).pipe(
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () => Effect.flatten(findByEmail(account.email))
        })),
        Effect.retry({ times: 3, while: (e) => e._tag === "NoSuchElementException" }),
        orStorageError
      )

    return {
      findById: (id) => findById(id).pipe(orStorageError),
      findByIdForUpdate: (id) => findByIdForUpdate(id).pipe(orStorageError),
      findByEmail: (email) => findByEmail(email).pipe(orStorageError),
      findByHostLogin: (login) => findByHostLogin(login).pipe(orStorageError),
      insertOrGet,
      update: (account) => update(account).pipe(orStorageError)
    }
  })
)

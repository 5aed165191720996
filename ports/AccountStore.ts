import { Context, type Effect, type Option } from "effect"
import type { Account } from "../domain/Account.js"
import type { AccountId } from "../domain/Ids.js"
import type { StorageError } from "./StorageError.js"

/**
 * Storage of seller accounts, looked up by id, email or verified code-host login. Every method fails with
 * `StorageError` when the store does (`unavailable` when the database did not answer).
 */
export class AccountStore extends Context.Tag("repomarket/AccountStore")<AccountStore, {
  readonly findById: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
  /**
   * Like findById, and locks the account until the current transaction ends, so a read-modify-write inside
   * one transaction sees no concurrent change. Call it inside `Transactor.withTransaction`.
   */
  readonly findByIdForUpdate: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<Account>, StorageError>
  /** Accounts whose verified code-host login is this owner (case-insensitive). */
  readonly findByHostLogin: (login: string) => Effect.Effect<ReadonlyArray<Account>, StorageError>
  /** Inserts the account unless one with the same email exists; returns the stored one either way. */
  readonly insertOrGet: (account: Account) => Effect.Effect<Account, StorageError>
  /** Replaces the stored account with the same id. */
  readonly update: (account: Account) => Effect.Effect<void, StorageError>
}>() {}

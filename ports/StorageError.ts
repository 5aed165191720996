import { Data } from "effect"

/**
 * A storage port could not do what it was asked: the database failed the statement. Every storage port
 * method that talks to a database puts it in its error channel (as `@effect/sql` does with `SqlError`);
 * memory adapters never fail with it. Its own typed errors (a unique-violation mapping such as
 * `LiveListingExists`) stay what they are.
 *
 * - `unavailable: true`: the database did not answer, not that the request was wrong: a statement cancelled
 *   by the statement timeout or waiting too long for a lock, no connection within the connect timeout, a
 *   server shutting down or refusing connections, a connection lost. Worth retrying shortly; the app answers
 *   `503 database_unavailable` with Retry-After. The SQL adapters classify it (`adapters/sql/StorageErrors.ts`).
 * - `unavailable: false`: any other storage failure (a bug, a broken constraint); the app answers 500.
 *
 * `message` says what failed, never a secret or a statement's parameters; `cause` keeps the driver's error
 * for the log.
 */
export class StorageError extends Data.TaggedError("StorageError")<{
  /** The database did not answer (timeout, refused or lost connection): retrying later may succeed. */
  readonly unavailable: boolean
  /** What failed, free of secrets and statement parameters. */
  readonly message: string
  /** The underlying error, for the log only. */
  readonly cause?: unknown
}> {}

/** Whether a value is a `StorageError` (a failure or a defect carrying one). */
export const isStorageError = (value: unknown): value is StorageError =>
  value instanceof StorageError

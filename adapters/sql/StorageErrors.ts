import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Predicate } from "effect"
import { StorageError } from "../../ports/StorageError.js"

/**
 * SQLSTATEs that mean "the database cannot answer right now" rather than a bug: a statement cancelled by the
 * statement timeout or waiting too long for a lock, a server shutting down or refusing connections, a
 * connection lost.
 */
const SQLSTATES = new Set([
  "57014", // query_canceled (statement_timeout)
  "55P03", // lock_not_available (lock_timeout)
  "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
  "53300", // too_many_connections
  "08000", "08001", "08003", "08004", "08006" // connection exceptions
])

/** Driver messages of the same: no connection within the connect timeout, a connection refused or lost. */
const MESSAGES = /timeout exceeded when trying to connect|connection terminated|query read timeout|ECONNREFUSED|ECONNRESET/i

/** Whether an error (or one of its causes) says the database did not answer. */
export const isUnavailable = (value: unknown, depth = 0): boolean => {
  if (depth > 6 || value === null || typeof value !== "object") return false
  const v = value as { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown }
  if (typeof v.code === "string" && SQLSTATES.has(v.code)) return true
  if (typeof v.message === "string" && MESSAGES.test(v.message)) return true
  return isUnavailable(v.cause, depth + 1)
}

/**
 * A `SqlError` as the ports' `StorageError`, classified. The message is @effect/sql's own ("Failed to
 * execute statement"...), which names no parameter; the driver's error stays in `cause` for the log.
 */
export const fromSqlError = (error: SqlError): StorageError =>
  new StorageError({ unavailable: isUnavailable(error), message: error.message, cause: error })

/**
 * Where a port method used to `Effect.orDie`: a `SqlError` fails as a `StorageError`; anything else (a row
 * that does not decode, a missing row that cannot be missing) is still a defect.
 */
export const orStorageError = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, StorageError, R> =>
  Effect.catchAll(self, (error) => Predicate.isTagged(error, "SqlError") ? Effect.fail(fromSqlError(error as unknown as SqlError)) : Effect.die(error))

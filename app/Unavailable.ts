import { Cause } from "effect"
import { problemBody, type ProblemJson } from "./Problem.js"

/**
 * A failure that means "the database cannot answer right now" rather than a bug: a statement cancelled by
 * the statement timeout or waiting too long for a lock, no connection within the connect timeout, a server
 * shutting down or refusing connections, a connection lost. Storage adapters turn SQL errors into defects
 * (no use case can act on them); the host answers these with 503 and Retry-After instead of a 500, so
 * clients retry and the operator's alerts tell an outage from a bug.
 */
const SQLSTATES = new Set([
  "57014", // query_canceled (statement_timeout)
  "55P03", // lock_not_available (lock_timeout)
  "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
  "53300", // too_many_connections
  "08000", "08001", "08003", "08004", "08006" // connection exceptions
])

const MESSAGES = /timeout exceeded when trying to connect|connection terminated|query read timeout|ECONNREFUSED|ECONNRESET/i

/** Seconds a client should wait before retrying. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

const isUnavailable = (value: unknown, depth = 0): boolean => {
  if (depth > 6 || value === null || typeof value !== "object") return false
  const v = value as { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown }
  if (typeof v.code === "string" && SQLSTATES.has(v.code)) return true
  if (typeof v.message === "string" && MESSAGES.test(v.message)) return true
  return isUnavailable(v.cause, depth + 1)
}

/** Whether a request failed only because the database could not answer in time. */
export const isDatabaseUnavailable = (cause: Cause.Cause<unknown>): boolean => {
  const reasons = [...Cause.defects(cause), ...Cause.failures(cause)]
  return reasons.length > 0 && reasons.some((r) => isUnavailable(r))
}

export const databaseUnavailableProblem = (): ProblemJson =>
  problemBody(503, "database_unavailable", "Service temporarily unavailable", "The database did not answer in time. Try again shortly.", {
    retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS
  })

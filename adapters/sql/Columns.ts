import type { SqlError } from "@effect/sql/SqlError"
import { Schema } from "effect"

/**
 * An `int8` column. node-postgres returns int8 as a decimal string (exact); a client configured to parse
 * int8 itself may hand over a bigint. A JS number is refused: money never passes through floating point.
 */
export const BigIntColumn = Schema.Union(Schema.BigIntFromSelf, Schema.BigInt)

/** A `timestamptz` column: node-postgres parses it into a Date. */
export const TimestampColumn = Schema.DateFromSelf

/** Whether a failed statement broke the named unique constraint or index (SQLSTATE 23505). */
export const isUniqueViolation = (error: SqlError, constraint: string): boolean => {
  const cause: unknown = error.cause
  if (typeof cause !== "object" || cause === null) return false
  const { code, constraint: name } = cause as { readonly code?: unknown; readonly constraint?: unknown }
  return code === "23505" && name === constraint
}

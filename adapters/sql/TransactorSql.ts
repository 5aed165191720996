import { SqlClient } from "@effect/sql"
import { Data, Effect, Layer } from "effect"
import type { StorageError } from "../../ports/StorageError.js"
import { Transactor } from "../../ports/Transactor.js"
import { fromSqlError } from "./StorageErrors.js"

/** Carries the rule's own failure through `withTransaction`, so it is told apart from a database failure. */
class RuleFailed<E> extends Data.TaggedError("RuleFailed")<{ readonly error: E }> {}

/**
 * One database transaction per rule (nested rules become savepoints). Every store call made inside uses the
 * transaction's connection, because @effect/sql carries it in the fiber's context. A failure or defect of the
 * rule rolls everything back and is passed on unchanged; a database failure (begin, commit) is a `StorageError`.
 * Isolation is PostgreSQL's default, READ COMMITTED: writes are all-or-nothing and never seen half-done, but
 * rules that read, then write whole rows should not assume the rows did not change meanwhile: such a rule
 * re-reads its rows with the stores' `findByIdForUpdate` inside the transaction, which locks them until it ends.
 * On embedded PGlite all connections share one session, so transactions simply run one at a time.
 */
export const TransactorSql = Layer.effect(
  Transactor,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError, R> =>
        effect.pipe(
          Effect.mapError((error) => new RuleFailed({ error })),
          sql.withTransaction,
          Effect.catchAll((failure): Effect.Effect<never, E | StorageError> =>
            failure instanceof RuleFailed ? Effect.fail(failure.error as E) : Effect.fail(fromSqlError(failure)))
        )
    }
  })
)

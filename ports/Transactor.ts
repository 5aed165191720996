import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/**
 * Runs a multi-row rule atomically: all of its writes land or none do, and concurrent rules do not see
 * each other half-done. SQL adapters open a transaction; the memory adapter serialises. The rule's own
 * failures pass through unchanged; the store failing to begin or commit is a `StorageError`.
 */
export class Transactor extends Context.Tag("repomarket/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}>() {}

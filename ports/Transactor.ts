import { Context, type Effect } from "effect"

/**
 * Runs a multi-row rule atomically: all of its writes land or none do, and concurrent rules do not see
 * each other half-done. SQL adapters open a transaction; the memory adapter serialises.
 */
export class Transactor extends Context.Tag("repomarket/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}

import { Cause, type Context, Effect, Either, Option } from "effect"
import { isStorageError, type StorageError } from "../ports/StorageError.js"
import { problemBody, type ProblemJson } from "./Problem.js"

/**
 * The one place a storage failure becomes an HTTP answer. Storage ports fail with `StorageError`
 * (ports/StorageError.ts); the SQL adapters classify it `unavailable` when the database did not answer (a
 * statement timeout, a lock wait, no connection, a server shutting down, a lost connection). The app answers
 * that with 503 `database_unavailable` and Retry-After instead of a 500, so clients retry and the operator's
 * alerts tell an outage from a bug; any other storage failure is a 500.
 *
 * The HttpApi endpoints, pages and MCP tools do not declare it: each reads its use cases through
 * `storageAsDefect`, which carries a `StorageError` on to the guard (`app/Guard.ts`) and the pages' `safely`
 * (`app/pages/PageRoutes.ts`) as a defect holding it; both read it back with `storageErrorOf`.
 */

/** Seconds a client should wait before retrying. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/** The `StorageError` a request failed with, as a failure or as a defect (see `storageAsDefect`). */
export const storageErrorOf = (cause: Cause.Cause<unknown>): Option.Option<StorageError> =>
  Option.fromNullable([...Cause.failures(cause), ...Cause.defects(cause)].find(isStorageError))

/** Whether a request failed only because the database could not answer in time. */
export const isDatabaseUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(storageErrorOf(cause), (e) => e.unavailable)

export const databaseUnavailableProblem = (): ProblemJson =>
  problemBody(503, "database_unavailable", "Service temporarily unavailable", "The database did not answer in time. Try again shortly.", {
    retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS
  })

type WithoutStorage<T> = T extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, Exclude<E, StorageError>, R> : T

/** A use case's service with `StorageError` taken out of every operation's error channel. */
export type AtTheEdge<S> = {
  readonly [K in keyof S]: S[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: P) => Effect.Effect<A, Exclude<E, StorageError>, R>
    : WithoutStorage<S[K]>
}

const dieOnStorage = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, isStorageError, (e) => Effect.die(e))

/** An effect to run (an Option or an Either is one too, but a value here, never touched). */
const isRunnable = (value: unknown): value is Effect.Effect<unknown, unknown, unknown> =>
  Effect.isEffect(value) && !Option.isOption(value) && !Either.isEither(value)

/**
 * A service (a use case) as the app's edges use it: a `StorageError` of any of its operations becomes a
 * defect holding it, so no endpoint declares it and the guard answers it in one place.
 */
export const storageAsDefect = <I, S extends object>(tag: Context.Tag<I, S>): Effect.Effect<AtTheEdge<S>, never, I> =>
  Effect.map(tag, (service) =>
    new Proxy(service, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key, target)
        if (isRunnable(value)) return dieOnStorage(value)
        if (typeof value !== "function") return value
        return (...args: Array<unknown>) => {
          const result: unknown = (value as (...a: Array<unknown>) => unknown).apply(target, args)
          return isRunnable(result) ? dieOnStorage(result) : result
        }
      }
    }) as unknown as AtTheEdge<S>)

import { Cause, Effect, Exit, Option, Scope } from "effect"

/** Why start-up failed, as one readable message (a ConfigError names its setting). */
export const startupError = (cause: Cause.Cause<unknown>): Error => {
  const failure = Cause.failureOption(cause)
  const reason = Option.isSome(failure) ? String(failure.value) : Cause.pretty(cause)
  return new Error(`repomarket cannot start on AWS Lambda: ${reason}`)
}

/** Something built once per Lambda instance and kept for every invocation it serves. */
export interface PerInstance<A> {
  /** The built value; the first call builds it. Rejects with why it cannot be built. */
  readonly get: () => Promise<A>
  /** Closes what the build acquired (database pool, sockets); the next `get` builds again. */
  readonly dispose: () => Promise<void>
}

/**
 * Builds `make` at most once at a time and keeps it, with the scope its resources live in. A failed build
 * is not kept, and what it had acquired is released: the next invocation tries again (a database that was
 * unreachable for a moment must not leave the instance broken until it is recycled).
 */
export const perInstance = <A, E>(make: Effect.Effect<A, E, Scope.Scope>): PerInstance<A> => {
  let built: Promise<{ readonly value: A; readonly scope: Scope.CloseableScope }> | undefined

  const build = async () => {
    const scope = Effect.runSync(Scope.make())
    const exit = await Effect.runPromiseExit(Scope.extend(make, scope))
    if (Exit.isSuccess(exit)) return { value: exit.value, scope }
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw startupError(exit.cause)
  }

  const get = () => {
    built ??= build().catch((error: unknown) => {
      built = undefined
      throw error
    })
    return built.then(({ value }) => value)
  }

  const dispose = async () => {
    const current = built
    built = undefined
    if (current === undefined) return
    await current.then(({ scope }) => Effect.runPromise(Scope.close(scope, Exit.void)), () => undefined)
  }

  return { get, dispose }
}

import { Effect, FiberRef, Layer } from "effect"
import { Transactor } from "../../ports/Transactor.js"

/**
 * In memory every store call is atomic on its own; a multi-row rule is made atomic by letting one rule run
 * at a time. Nested calls join the running one. There is no rollback: memory use cases validate before
 * they write, which is the order the domain follows anyway.
 */
export const TransactorMemory = Layer.scoped(
  Transactor,
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    const inside = yield* FiberRef.make(false)
    return {
      withTransaction: (effect) =>
        Effect.flatMap(FiberRef.get(inside), (nested) =>
          nested ? effect : lock.withPermits(1)(Effect.locally(effect, inside, true)))
    }
  })
)

import { type Duration, Effect, Fiber, Option, type Scope } from "effect"
import { HostLifecycle } from "../../app/Lifecycle.js"

/** How long a stopping host lets a worker's pass in progress finish before interrupting it. */
export const FINISH_PASS_MS = 10_000

/**
 * A background worker of the Node host: runs `pass` again and again, pausing `pause(result)` between passes.
 * It stops claiming work as soon as the host drains (SIGTERM), and when its scope closes it lets the pass in
 * progress finish (at most `finishMs`) rather than cutting a webhook attempt or a chain lookup in half;
 * a pause is simply cut short.
 */
export const workerLoop = <A>(
  pass: Effect.Effect<A>,
  pause: (result: A) => Duration.DurationInput,
  finishMs: number = FINISH_PASS_MS
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const lifecycle = yield* Effect.serviceOption(HostLifecycle)
    let stopping = false
    let busy = false
    const claiming = () => !stopping && !(Option.isSome(lifecycle) && lifecycle.value.draining())
    const step = Effect.suspend(() => {
      if (!claiming()) return Effect.sleep(250)
      busy = true
      return pass.pipe(
        Effect.ensuring(Effect.sync(() => (busy = false))),
        Effect.flatMap((result) => Effect.sleep(pause(result)))
      )
    })
    const fiber = yield* Effect.forkDaemon(Effect.forever(step))
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        stopping = true
        const until = Date.now() + finishMs
        while (busy && Date.now() < until) yield* Effect.sleep(25)
        yield* Fiber.interrupt(fiber)
      })
    )
  })

import { Clock, Context, Effect, Layer } from "effect"
import { LimitExceeded, RateLimiter } from "../../ports/RateLimiter.js"

interface Window {
  /** Times (ms) of the accepted events still inside the window, oldest first. */
  readonly hits: Array<number>
  windowMs: number
}

const SWEEP_EVERY_MS = 60_000
const SWEEP_EVERY_CALLS = 10_000

/**
 * A sliding-window log per key, kept in this process. Refused attempts are not counted, so hammering does
 * not extend a lock-out. Keys whose window has passed are swept periodically so memory follows live keys.
 */
export const makeRateLimiterMemory = Effect.sync(() => {
  const windows = new Map<string, Window>()
  let lastSweep = Number.NEGATIVE_INFINITY
  let callsSinceSweep = 0

  const sweep = (now: number) => {
    for (const [key, window] of windows) {
      const newest = window.hits.at(-1)
      if (newest === undefined || newest <= now - window.windowMs) windows.delete(key)
    }
    lastSweep = now
    callsSinceSweep = 0
  }

  // Synchronous from reading the clock to recording the hit: no other fiber can interleave.
  // An event of cost n is n hits at the same time.
  const consume = (key: string, limit: number, windowMs: number, cost = 1): Effect.Effect<void, LimitExceeded> =>
    Effect.clockWith((clock) =>
      Effect.suspend(() => {
        const now = clock.unsafeCurrentTimeMillis()
        if (now - lastSweep >= SWEEP_EVERY_MS || ++callsSinceSweep >= SWEEP_EVERY_CALLS) sweep(now)
        const window = windows.get(key) ?? { hits: [], windowMs }
        window.windowMs = windowMs
        windows.set(key, window)
        const expired = window.hits.findIndex((t) => t > now - windowMs)
        window.hits.splice(0, expired < 0 ? window.hits.length : expired)
        if (window.hits.length + cost <= limit) {
          for (let i = 0; i < cost; i++) window.hits.push(now)
          return Effect.void
        }
        // Room for `cost` frees when the hit that keeps the count above `limit - cost` leaves the window.
        const keep = limit - cost
        const freesAt = keep >= 0 ? window.hits[window.hits.length - 1 - keep]! + windowMs : now + windowMs
        return Effect.fail(new LimitExceeded({ retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now) / 1000)) }))
      })
    )

  return {
    consume,
    /** How many keys are tracked; lets tests check that idle keys are dropped. */
    trackedKeys: Effect.sync(() => windows.size)
  } as const
})

/** Counts per key with Effect's Clock (so TestClock drives it); per process, as the port allows. */
export const RateLimiterMemory: Layer.Layer<RateLimiter> = Layer.effect(
  RateLimiter,
  Effect.map(makeRateLimiterMemory, ({ consume }): Context.Tag.Service<RateLimiter> => ({ consume }))
)

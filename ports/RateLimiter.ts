import { Context, Data, type Effect } from "effect"

/** Raised by `RateLimiter.consume` when the key's limit is reached; says when to try again. */
export class LimitExceeded extends Data.TaggedError("LimitExceeded")<{ readonly retryAfterSeconds: number }> {}

/** Counts events per key in a window. Per process is acceptable: limits protect, they do not decide money. */
export class RateLimiter extends Context.Tag("ports/RateLimiter")<RateLimiter, {
  readonly consume: (key: string, limit: number, windowMs: number) => Effect.Effect<void, LimitExceeded>
}>() {}

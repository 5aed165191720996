import { Context, Data, type Effect } from "effect"

/** Raised by `RateLimiter.consume` when the key's limit is reached; says when to try again. */
export class LimitExceeded extends Data.TaggedError("LimitExceeded")<{ readonly retryAfterSeconds: number }> {}

/** Counts events per key in a window. Per process is acceptable: limits protect, they do not decide money. */
export class RateLimiter extends Context.Tag("repomarket/RateLimiter")<RateLimiter, {
  /**
   * Counts one event of `cost` points (default 1) against `limit` points per `windowMs` for `key`, or fails
   * when they do not fit: an expensive request (a text search) spends more of a client's budget than a cheap
   * one. A cost above the limit never fits.
   */
  readonly consume: (key: string, limit: number, windowMs: number, cost?: number) => Effect.Effect<void, LimitExceeded>
}>() {}

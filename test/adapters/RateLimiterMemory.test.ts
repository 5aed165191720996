import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { makeRateLimiterMemory, RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { RateLimiter } from "../../ports/RateLimiter.js"

const MINUTE = 60_000

describe("RateLimiterMemory", () => {
  it.effect("allows N per window, refuses N+1 with the seconds until a slot frees", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      for (let i = 0; i < 3; i++) yield* limiter.consume("k", 3, MINUTE)
      const refused = yield* Effect.flip(limiter.consume("k", 3, MINUTE))
      expect(refused._tag).toBe("LimitExceeded")
      expect(refused.retryAfterSeconds).toBe(60)
      yield* TestClock.adjust("20 seconds")
      expect((yield* Effect.flip(limiter.consume("k", 3, MINUTE))).retryAfterSeconds).toBe(40)
      yield* TestClock.adjust("40 seconds")
      yield* limiter.consume("k", 3, MINUTE)
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("slides: a slot frees when the oldest hit leaves the window", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      yield* limiter.consume("k", 2, MINUTE) // t = 0
      yield* TestClock.adjust("30 seconds")
      yield* limiter.consume("k", 2, MINUTE) // t = 30 s
      yield* TestClock.adjust("15 seconds")
      expect((yield* Effect.flip(limiter.consume("k", 2, MINUTE))).retryAfterSeconds).toBe(15)
      yield* TestClock.adjust("15 seconds") // t = 60 s: the first hit has left
      yield* limiter.consume("k", 2, MINUTE)
      // Now the hits are at 30 s and 60 s: the next slot frees at 90 s.
      expect((yield* Effect.flip(limiter.consume("k", 2, MINUTE))).retryAfterSeconds).toBe(30)
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("rounds retryAfterSeconds up, and never below 1", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      yield* limiter.consume("k", 1, 1500)
      expect((yield* Effect.flip(limiter.consume("k", 1, 1500))).retryAfterSeconds).toBe(2)
      yield* TestClock.adjust("1400 millis")
      expect((yield* Effect.flip(limiter.consume("k", 1, 1500))).retryAfterSeconds).toBe(1)
      yield* TestClock.adjust("99 millis")
      expect((yield* Effect.flip(limiter.consume("k", 1, 1500))).retryAfterSeconds).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* limiter.consume("k", 1, 1500)
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("an event of cost n spends n of the limit; it is refused when n do not fit, until enough hits leave", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      yield* limiter.consume("k", 10, MINUTE, 4) // t = 0: 4
      yield* TestClock.adjust("10 seconds")
      yield* limiter.consume("k", 10, MINUTE) // t = 10 s: 5
      yield* TestClock.adjust("10 seconds")
      yield* limiter.consume("k", 10, MINUTE, 4) // t = 20 s: 9
      // 1 fits, 2 do not: room for 2 comes when the 4 hits of t = 0 leave, at 60 s.
      expect((yield* Effect.flip(limiter.consume("k", 10, MINUTE, 2))).retryAfterSeconds).toBe(40)
      // Room for 6 needs the hits of t = 0 and t = 10 s gone: 50 s from now. A refusal counts nothing.
      expect((yield* Effect.flip(limiter.consume("k", 10, MINUTE, 6))).retryAfterSeconds).toBe(50)
      yield* limiter.consume("k", 10, MINUTE) // 10
      expect((yield* Effect.flip(limiter.consume("k", 10, MINUTE))).retryAfterSeconds).toBe(40)
      yield* TestClock.adjust("40 seconds") // t = 60 s: the first 4 leave
      yield* limiter.consume("k", 10, MINUTE, 4)
      // More than the limit never fits, whatever the window holds.
      expect((yield* Effect.flip(limiter.consume("other", 3, MINUTE, 4))).retryAfterSeconds).toBe(60)
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("does not count refused attempts", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      yield* limiter.consume("k", 1, MINUTE)
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("10 seconds")
        yield* Effect.flip(limiter.consume("k", 1, MINUTE))
      }
      yield* TestClock.adjust("10 seconds")
      yield* limiter.consume("k", 1, MINUTE)
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("keeps keys independent", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      for (let i = 0; i < 5; i++) yield* limiter.consume("email:a@example.com", 5, MINUTE)
      yield* Effect.flip(limiter.consume("email:a@example.com", 5, MINUTE))
      for (let i = 0; i < 5; i++) yield* limiter.consume("email:b@example.com", 5, MINUTE)
      expect((yield* Effect.flip(limiter.consume("email:b@example.com", 5, MINUTE)))._tag).toBe("LimitExceeded")
    }).pipe(Effect.provide(RateLimiterMemory)))

  it.effect("drops keys whose window has passed", () =>
    Effect.gen(function*() {
      const limiter = yield* makeRateLimiterMemory
      for (let i = 0; i < 100; i++) yield* limiter.consume(`ip:${i}`, 20, MINUTE)
      expect(yield* limiter.trackedKeys).toBe(100)
      yield* TestClock.adjust("30 seconds")
      yield* limiter.consume("ip:live", 20, 10 * MINUTE)
      yield* TestClock.adjust("61 seconds")
      yield* limiter.consume("ip:0", 20, MINUTE)
      // The 100 idle keys are gone; the one still in its window and the fresh one remain.
      expect(yield* limiter.trackedKeys).toBe(2)
    }))
})

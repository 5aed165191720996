import { describe, expect, it } from "@effect/vitest"
import { QuotaMeter, readingOf } from "../../../adapters/github/Quota.js"

const T = 1_800_000_000_000
const reading = (remaining: number, resetMs = T + 3_600_000, limit = 5000) => ({ limit, remaining, resetMs })

describe("QuotaMeter: the server credential's GitHub quota and its reserve", () => {
  it("reads GitHub's x-ratelimit-* headers for the core limit only, whole numbers only", () => {
    expect(readingOf({ "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", "x-ratelimit-reset": "1800003600", "x-ratelimit-resource": "core" }))
      .toEqual({ limit: 5000, remaining: 4999, resetMs: 1_800_003_600_000 })
    expect(readingOf({ "x-ratelimit-limit": "30", "x-ratelimit-remaining": "29", "x-ratelimit-reset": "1800003600", "x-ratelimit-resource": "search" })).toBeNull()
    expect(readingOf({ "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "-1", "x-ratelimit-reset": "1800003600" })).toBeNull()
    expect(readingOf({ "x-ratelimit-limit": "5000", "x-ratelimit-reset": "1800003600" })).toBeNull()
    expect(readingOf({})).toBeNull()
  })

  it("unknown until GitHub has answered in this window; spare calls stop where the reserve (20 % of the limit) begins", () => {
    const q = new QuotaMeter(0.2)
    expect(q.verdict(T)._tag).toBe("Unknown")
    q.observe(reading(1001))
    expect(q.verdict(T)._tag).toBe("Spare")
    q.observe(reading(1000))
    expect(q.verdict(T)).toEqual({ _tag: "Reserved", retryAfterSeconds: 3600 })
    // The window's end: nothing known again.
    expect(q.verdict(T + 3_600_000)._tag).toBe("Unknown")
  })

  it("answers arriving out of order keep the lowest count of a window; a later reset starts a new one", () => {
    const q = new QuotaMeter(0.2)
    q.observe(reading(1005))
    q.observe(reading(2000))
    expect(q.current(T)?.remaining).toBe(1005)
    q.observe(reading(4999, T + 7_200_000))
    expect(q.current(T)?.remaining).toBe(4999)
    // An answer from the window before is ignored.
    q.observe(reading(10))
    expect(q.current(T)?.remaining).toBe(4999)
  })

  it("requests still waiting for their answer count as spent, so concurrent spare calls cannot all pass one reading", () => {
    const q = new QuotaMeter(0.2)
    q.observe(reading(1003))
    const done = [q.sent(), q.sent()]
    expect(q.verdict(T)._tag).toBe("Spare")
    const third = q.sent()
    expect(q.verdict(T)._tag).toBe("Reserved")
    third()
    third()
    expect(q.verdict(T)._tag).toBe("Spare")
    for (const d of done) d()
  })

  it("a failed probe lets spare calls go for a while, then asks again", () => {
    const q = new QuotaMeter(0.2)
    q.probeFailed(T, 60_000)
    expect(q.verdict(T + 59_999)._tag).toBe("Spare")
    expect(q.verdict(T + 60_000)._tag).toBe("Unknown")
  })
})

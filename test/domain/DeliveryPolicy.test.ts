import { describe, expect, it } from "@effect/vitest"
import { isDelivered, nextAttemptAt } from "../../domain/rules/DeliveryPolicy.js"
import { DELIVERY_WINDOW_MS } from "../../domain/WebhookEvent.js"

const first = new Date("2024-03-01T10:00:00.000Z")
const after = (ms: number) => new Date(first.getTime() + ms)
/** Milliseconds from `now` to the next attempt, or null when delivery stops. */
const waitAfter = (attempts: number, nowMs: number) => {
  const next = nextAttemptAt(first, attempts, after(nowMs))
  return next === null ? null : next.getTime() - first.getTime() - nowMs
}

describe("webhook delivery retries", () => {
  it("a failed delivery is tried again after 1 s, 2 s, 4 s, 8 s, then every 8 s", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempts) => waitAfter(attempts, 0))).toEqual([1000, 2000, 4000, 8000, 8000, 8000])
  })

  it("the first retry waits one second even when no attempt was counted yet", () => {
    expect(waitAfter(0, 0)).toBe(1000)
  })

  it("retries stop about 30 seconds after the first attempt; the last one lands on the window's end", () => {
    expect(DELIVERY_WINDOW_MS).toBe(30_000)
    expect(nextAttemptAt(first, 5, after(25_000))?.toISOString()).toBe(after(30_000).toISOString())
    expect(nextAttemptAt(first, 1, after(29_999))?.toISOString()).toBe(after(30_000).toISOString())
    expect(nextAttemptAt(first, 5, after(30_000))).toBeNull()
    expect(nextAttemptAt(first, 5, after(45_000))).toBeNull()
  })

  it("a 2xx answer is delivery; anything else is not", () => {
    for (const status of [200, 201, 204, 299]) expect(isDelivered(status), String(status)).toBe(true)
    for (const status of [100, 199, 300, 302, 400, 410, 500, 503]) expect(isDelivered(status), String(status)).toBe(false)
  })
})

import { DELIVERY_WINDOW_MS } from "../WebhookEvent.js"

/**
 * When to try a failed delivery again: 1 s, 2 s, 4 s, 8 s, then every 8 s, never past the window of about
 * 30 seconds from the first attempt; the last try lands at the window's end. Null: stop, mark failed.
 */
export const nextAttemptAt = (firstAttemptAt: Date, attempts: number, now: Date): Date | null => {
  const deadline = firstAttemptAt.getTime() + DELIVERY_WINDOW_MS
  if (now.getTime() >= deadline) return null
  const delay = Math.min(1000 * 2 ** Math.max(0, attempts - 1), 8000)
  return new Date(Math.min(now.getTime() + delay, deadline))
}

/** A receiver's answer counts as delivery exactly when it is 2xx. */
export const isDelivered = (status: number): boolean => status >= 200 && status < 300

/**
 * The server's share of GitHub's primary rate limit, as GitHub itself reports it.
 *
 * Every REST answer carries `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset` (epoch
 * seconds) for the credential the request was made with. The server's own credential (`GITHUB_TOKEN`, or the
 * server's address when anonymous) is one budget shared by every visitor: 5 000 an hour with a token, 60
 * without. A share of it (`reserveShare` of the limit, 20 % by default) is kept for the calls that sell:
 * previews of listed repos, listing, purchases and receipts. Anonymous lookups that anybody can trigger for any
 * name (an owner's index of public repos) are "spare" calls: they never take the remaining quota below the
 * reserve, so made-up owner names cannot drain it.
 *
 * Answers read with a seller's `host_pat` count against the seller's own budget and are not observed here.
 * Requests still waiting for their answer count as spent, so a crowd of concurrent spare calls cannot all
 * pass on the same reading. The numbers are per process but come from GitHub, so several processes (or
 * hosts) sharing one token see each other's spending within one answer.
 */

/** What GitHub said last about the server credential's primary (`core`) limit. */
export interface QuotaReading {
  readonly limit: number
  readonly remaining: number
  /** When the window resets, ms since the epoch. */
  readonly resetMs: number
}

/** The share of the hourly quota kept for previews, listing and purchases (`GITHUB_QUOTA_RESERVE_PERCENT`). */
export const DEFAULT_QUOTA_RESERVE_SHARE = 0.2

const header = (headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const value = headers[name] ?? headers[name.toLowerCase()]
  return value === undefined || value === "" ? undefined : String(value)
}

const wholeNumber = (text: string | undefined): number | null => {
  if (text === undefined || !/^\d{1,12}$/.test(text.trim())) return null
  return Number(text.trim())
}

/** The reading in an answer's headers, if it carries a complete one for the core limit. */
export const readingOf = (headers: Readonly<Record<string, string | undefined>>): QuotaReading | null => {
  const resource = header(headers, "x-ratelimit-resource")
  if (resource !== undefined && resource !== "core") return null
  const limit = wholeNumber(header(headers, "x-ratelimit-limit"))
  const remaining = wholeNumber(header(headers, "x-ratelimit-remaining"))
  const reset = wholeNumber(header(headers, "x-ratelimit-reset"))
  if (limit === null || remaining === null || reset === null || limit === 0) return null
  return { limit, remaining: Math.min(remaining, limit), resetMs: reset * 1000 }
}

export type QuotaVerdict =
  /** Nothing is known for the current window: ask GitHub (`GET /rate_limit` is free). */
  | { readonly _tag: "Unknown" }
  /** A spare call may go. */
  | { readonly _tag: "Spare" }
  /** Under the reserve: spare calls wait for the reset. */
  | { readonly _tag: "Reserved"; readonly retryAfterSeconds: number }

export class QuotaMeter {
  private reading: QuotaReading | null = null
  /** Requests with the server credential sent and not yet answered. */
  private inFlight = 0
  /** Until when a failed `/rate_limit` probe lets spare calls go without a reading (ms). */
  private unknownUntil = 0

  constructor(readonly reserveShare: number) {}

  /** The last reading, while its window lasts. */
  current(nowMs: number): QuotaReading | null {
    return this.reading !== null && nowMs < this.reading.resetMs ? this.reading : null
  }

  /**
   * An answer's reading. Within one window GitHub's remaining count only goes down, so answers that arrive out
   * of order keep the lowest; a later reset starts a new window.
   */
  observe(next: QuotaReading | null): void {
    if (next === null) return
    const last = this.reading
    if (last === null || next.resetMs > last.resetMs + 1000) this.reading = next
    else if (next.resetMs >= last.resetMs - 1000) this.reading = { ...last, limit: next.limit, remaining: Math.min(last.remaining, next.remaining) }
  }

  /** Calls the reserve keeps for selling: `reserveShare` of the limit, rounded up. */
  reserveOf(reading: QuotaReading): number {
    return Math.ceil(reading.limit * this.reserveShare)
  }

  /** Whether one more spare call may be made now. */
  verdict(nowMs: number): QuotaVerdict {
    const reading = this.current(nowMs)
    if (reading === null) return nowMs < this.unknownUntil ? { _tag: "Spare" } : { _tag: "Unknown" }
    // After this call, at least the reserve must be left: answers still outstanding count as spent.
    if (reading.remaining - this.inFlight - 1 >= this.reserveOf(reading)) return { _tag: "Spare" }
    return { _tag: "Reserved", retryAfterSeconds: Math.max(1, Math.ceil((reading.resetMs - nowMs) / 1000)) }
  }

  /** No reading could be had (e.g. an Enterprise server with rate limiting off): let spare calls go a while. */
  probeFailed(nowMs: number, forMs: number): void {
    this.unknownUntil = nowMs + forMs
  }

  /** A request with the server credential is on its way; call the returned function when it is answered. */
  sent(): () => void {
    this.inFlight++
    let done = false
    return () => {
      if (!done) {
        done = true
        this.inFlight--
      }
    }
  }
}

import { createHash } from "node:crypto"
import { Option, Redacted } from "effect"

/**
 * A per-process cache of code-host answers, refreshed with conditional requests.
 *
 * - An entry is fresh for `freshMs` after it was stored or last revalidated: a fresh hit costs the code host
 *   nothing. A stale entry is revalidated with `If-None-Match`; a 304 renews it (and is free against GitHub's
 *   rate limit when authenticated).
 * - Bounded twice: by entry count and by an estimated weight (roughly bytes); the least recently used go first.
 * - Keys carry a digest of the credential, never the token itself, so one seller's token never serves another's
 *   request and a key can be logged safely.
 */
export interface CacheEntry<A> {
  readonly etag: string | null
  readonly value: A
  readonly freshUntil: number
  readonly weight: number
}

export interface EtagCacheOptions {
  readonly freshMs: number
  readonly maxEntries: number
  readonly maxWeight: number
}

export class EtagCache {
  private readonly entries = new Map<string, CacheEntry<unknown>>()
  private weight = 0

  constructor(readonly options: EtagCacheOptions) {}

  get size(): number {
    return this.entries.size
  }

  get totalWeight(): number {
    return this.weight
  }

  /** The entry, fresh or stale, marked as recently used. */
  get<A>(key: string): CacheEntry<A> | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry as CacheEntry<A>
  }

  isFresh(entry: CacheEntry<unknown>, nowMs: number): boolean {
    return nowMs < entry.freshUntil
  }

  /** Stores an answer, fresh for `freshMs` (the cache's own window unless given). */
  set<A>(key: string, etag: string | null, value: A, weight: number, nowMs: number, freshMs: number = this.options.freshMs): void {
    this.delete(key)
    // An answer bigger than the whole budget is served but not kept.
    if (weight > this.options.maxWeight) return
    this.entries.set(key, { etag, value, weight, freshUntil: nowMs + freshMs })
    this.weight += weight
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.weight <= this.options.maxWeight) break
      this.entries.delete(oldest)
      this.weight -= entry.weight
    }
  }

  /** A 304: the stored value is current again for another window. */
  renew(key: string, nowMs: number): void {
    const entry = this.entries.get(key)
    if (entry !== undefined) this.entries.set(key, { ...entry, freshUntil: nowMs + this.options.freshMs })
  }

  delete(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.weight -= entry.weight
  }
}

/**
 * The credential part of a cache key: `public` for anonymous or server-token reads (both see only public
 * data), else a SHA-256 prefix of the listing's token.
 */
export const credentialKey = (token: Option.Option<Redacted.Redacted<string>>): string =>
  Option.match(token, {
    onNone: () => "public",
    onSome: (t) => `token:${createHash("sha256").update(Redacted.value(t), "utf8").digest("hex").slice(0, 32)}`
  })

/** Rough size in bytes of a JSON-like value, for the weight budget. */
export const weightOf = (value: unknown): number => {
  if (typeof value === "string") return 2 * value.length + 16
  if (value === null || typeof value !== "object") return 16
  let total = 32
  if (Array.isArray(value)) for (const item of value) total += weightOf(item)
  else for (const [k, v] of Object.entries(value)) total += 2 * k.length + weightOf(v)
  return total
}

import { Config, type ConfigError, Context, Deferred, Effect, FiberId, Layer, Option } from "effect"
import { SearchUnavailable } from "../../domain/Errors.js"

/*
 * What one client and all clients together may spend of the database on the public catalog (`GET /listings`
 * and the home page, which reads the newest listings and the category counts):
 * - a text search counts as `PUBLIC_SEARCH_COST` page views against `PUBLIC_PAGES_PER_MINUTE` (PageHandlers);
 * - at most `CATALOG_CONCURRENCY` catalog reads run at once in this process; one beyond that waits up to
 *   `CATALOG_QUEUE_MS` for a slot, first come first served, then answers 503 `search_busy` with Retry-After.
 *   So searches hold at most that many of the pool's connections and cannot starve purchases and writes;
 *   each statement of a search is also bounded by `CATALOG_STATEMENT_TIMEOUT_MS` (the SQL catalog).
 *   The gate is one per process (`CatalogGate`, built once by `AppLive`): the HTTP catalog, the home page and
 *   the MCP `search_listings` tool all wait for the same slots, so no door adds its own share.
 */

const whole = (name: string, fallback: number, min: number, max: number, what: string) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a whole number from ${min} to ${max} (${what})`, validation: (n) => n >= min && n <= max })
  )

/** `PUBLIC_SEARCH_COST` (default 4): how many page views a catalog request with text (`q`) counts as. */
export const publicSearchCost = whole("PUBLIC_SEARCH_COST", 4, 1, 1000, "page views one text search counts as")

/** The catalog's limits on database work for public reads. */
export interface CatalogLimits {
  /** `CATALOG_CONCURRENCY` (default 4; 0: no cap): catalog reads at once in this process. */
  readonly concurrency: number
  /** `CATALOG_QUEUE_MS` (default 1000): how long a read beyond the cap waits for a slot before 503. */
  readonly queueMs: number
}

export const DEFAULT_CATALOG_LIMITS: CatalogLimits = { concurrency: 4, queueMs: 1_000 }

export const catalogLimitsConfig: Config.Config<CatalogLimits> = Config.all({
  concurrency: whole("CATALOG_CONCURRENCY", DEFAULT_CATALOG_LIMITS.concurrency, 0, 10_000, "0 turns the cap off"),
  queueMs: whole("CATALOG_QUEUE_MS", DEFAULT_CATALOG_LIMITS.queueMs, 0, 60_000, "milliseconds")
})

/** Seconds a client turned away for want of a slot is told to wait. */
const BUSY_RETRY_AFTER_SECONDS = 1

const busy = () =>
  new SearchUnavailable({
    reason: "search_busy",
    retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS,
    detail: "Too many catalog searches are running right now. Try again in a moment."
  })

interface Waiter {
  state: "waiting" | "granted" | "gone"
  readonly granted: Deferred.Deferred<void>
}

/**
 * A gate of `concurrency` slots: `run(effect)` runs the effect in a slot, waiting for one up to `queueMs`
 * (then failing with `search_busy`). A freed slot passes straight to the longest waiter. Every step that
 * changes the slots is synchronous, so a slot granted as its waiter gives up is still used or given back,
 * never lost; an interrupted request gives its slot (or its place in the queue) back too.
 */
export const makeCatalogGate = (limits: CatalogLimits) =>
  Effect.sync(() => {
    let used = 0
    const queue: Array<Waiter> = []

    const release = Effect.sync(() => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        if (next.state !== "waiting") continue
        next.state = "granted"
        Deferred.unsafeDone(next.granted, Effect.void)
        return
      }
      used--
    })

    /** Succeeds once holding a slot, or fails with `search_busy`. */
    const acquire: Effect.Effect<void, SearchUnavailable> = Effect.suspend(() => {
      if (used < limits.concurrency) {
        used++
        return Effect.void
      }
      if (limits.queueMs === 0) return Effect.fail(busy())
      const waiter: Waiter = { state: "waiting", granted: Deferred.unsafeMake<void>(FiberId.none) }
      queue.push(waiter)
      return Deferred.await(waiter.granted).pipe(
        Effect.timeoutOption(limits.queueMs),
        Effect.flatMap(() =>
          Effect.suspend(() => {
            if (waiter.state === "granted") return Effect.void
            waiter.state = "gone"
            return Effect.fail(busy())
          })
        ),
        Effect.onInterrupt(() =>
          Effect.suspend(() => {
            if (waiter.state === "granted") return release
            waiter.state = "gone"
            return Effect.void
          })
        )
      )
    })

    const run = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SearchUnavailable, R> =>
      limits.concurrency === 0
        ? effect
        : Effect.uninterruptibleMask((restore) => Effect.zipRight(restore(acquire), Effect.ensuring(restore(effect), release)))

    return {
      run,
      /** Slots in use and requests waiting, for tests. */
      state: Effect.sync(() => ({ used, waiting: queue.filter((w) => w.state === "waiting").length }))
    } as const
  })

/** A catalog gate, as `makeCatalogGate` builds it. */
export type CatalogGateShape = Effect.Effect.Success<ReturnType<typeof makeCatalogGate>>

/**
 * The process's one catalog gate, shared by every door that reads the catalog for the public (the HTTP catalog
 * and home page, the MCP search). `AppLive` provides it once (`CatalogGateLive`).
 */
export class CatalogGate extends Context.Tag("repomarket/CatalogGate")<CatalogGate, CatalogGateShape>() {}

/** The gate, from `CATALOG_CONCURRENCY` and `CATALOG_QUEUE_MS`. */
export const CatalogGateLive = Layer.effect(CatalogGate, Effect.flatMap(catalogLimitsConfig, makeCatalogGate))

/**
 * The process's gate where there is one (the HTTP app's), else one made from the settings: a process that
 * serves only MCP over stdio has no other door to share with.
 */
export const catalogGate: Effect.Effect<CatalogGateShape, ConfigError.ConfigError> = Effect.flatMap(
  Effect.serviceOption(CatalogGate),
  Option.match({ onSome: Effect.succeed, onNone: () => Effect.flatMap(catalogLimitsConfig, makeCatalogGate) })
)

import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Runtime } from "effect"
import { RateLimiterMemory as FlexibleMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible"
import { LimitExceeded, RateLimiter } from "../../ports/RateLimiter.js"

/** The table of migration 0006. */
const TABLE = "rate_limits"

type Limiter = RateLimiterPostgres

/**
 * Per-client limits counted in PostgreSQL (table `rate_limits`, migration 0006) with `rate-limiter-flexible`'s
 * PostgreSQL store, so N hosts on one database admit a client L times per window in all, not N × L.
 *
 * - One atomic upsert per counted request (`INSERT … ON CONFLICT DO UPDATE … RETURNING`): fixed windows that
 *   start at a key's first request. Refused attempts are counted too, but they never move the window's end,
 *   so hammering does not extend a lock-out.
 * - A key that has spent its limit is then refused from this process's memory until its window ends
 *   (`inMemoryBlockOnConsumed`): a flood from one client costs the database nothing after the limit.
 * - The database not answering does not turn limits off and does not fail the request: the library's
 *   insurance limiter counts in this process's memory meanwhile (per host, as before this store existed).
 * - Keys are stored as SHA-256 digests: the table holds no email address or client address.
 *
 * The driver's queries run on the pool (never inside a caller's transaction: a count must not roll back).
 */
export const makeRateLimiterSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const runtime = yield* Effect.runtime<never>()
  const run = Runtime.runPromise(runtime)
  // The store asks a node-postgres-like `query({ text, values })`; answered through the service's own pool.
  const storeClient = {
    query: (q: { readonly text: string; readonly values?: ReadonlyArray<unknown> }) =>
      run(sql.unsafe(q.text, (q.values ?? []) as Array<any>)).then((rows) => ({ rows }))
  }
  const limiters = new Map<string, Limiter>()

  const limiterFor = (limit: number, windowMs: number): Limiter => {
    const id = `${limit}/${windowMs}`
    let limiter = limiters.get(id)
    if (limiter === undefined) {
      const duration = windowMs / 1000
      limiter = new RateLimiterPostgres({
        storeClient,
        storeType: "pool",
        tableName: TABLE,
        tableCreated: true,
        keyPrefix: "rl",
        points: limit,
        duration,
        inMemoryBlockOnConsumed: limit,
        insuranceLimiter: new FlexibleMemory({ points: limit, duration, keyPrefix: "rl" })
      })
      limiters.set(id, limiter)
    }
    return limiter
  }

  const consume = (key: string, limit: number, windowMs: number, cost = 1): Effect.Effect<void, LimitExceeded> => {
    if (limit <= 0 || cost > limit) return Effect.fail(new LimitExceeded({ retryAfterSeconds: Math.max(1, Math.ceil(windowMs / 1000)) }))
    const digest = createHash("sha256").update(`${limit}/${windowMs}/${key}`).digest("base64url")
    return Effect.tryPromise({
      try: () => limiterFor(limit, windowMs).consume(digest, cost),
      catch: (refusal) => refusal
    }).pipe(
      Effect.asVoid,
      Effect.catchAll((refusal) =>
        refusal instanceof RateLimiterRes
          ? Effect.fail(new LimitExceeded({ retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) }))
          // Neither store answered (cannot happen with the memory insurance, but never a 500 for a limit).
          : Effect.as(Effect.logWarning("Rate limiter failed; request allowed", String(refusal)), undefined)
      )
    )
  }
  return { consume }
})

/** The RateLimiter port on the SqlClient (PostgreSQL servers; see RateLimiterLive for when it is chosen). */
export const RateLimiterSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.effect(RateLimiter, makeRateLimiterSql)

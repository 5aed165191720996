import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { ChangeFeed, type ChangeReason } from "../../ports/ChangeFeed.js"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Stream } from "effect"

export { ChangeFeed, type ChangeReason }

/** The PostgreSQL channel every host of one database announces its writes on. */
export const CHANNEL = "repomarket_changes"

/** How the change feed notices a lost listening connection. */
export interface ChangeFeedTiming {
  /** How often a host sends itself a heartbeat through the channel. */
  readonly heartbeatMs: number
  /** No heartbeat back for this long: the listening connection is taken as lost. */
  readonly lostAfterMs: number
  /** Wait between attempts to listen again. */
  readonly retryMs: number
}

/** The production timing of the change feed. */
export const DEFAULT_CHANGE_FEED_TIMING: ChangeFeedTiming = { heartbeatMs: 1_000, lostAfterMs: 3_000, retryMs: 1_000 }



/** One host alone (embedded PGlite, memory): nobody else to tell, nothing to hear. */
export const ChangeFeedNone = Layer.succeed(ChangeFeed, { publish: Effect.void, follow: () => Effect.never })

/**
 * The feed over PostgreSQL `LISTEN`/`NOTIFY` (`@effect/sql-pg`'s `listen` on its own connection).
 *
 * A lost listening connection is not reported by the driver's stream, and a half-open one would not be
 * noticed at all, so each host proves its subscription with a heartbeat it sends itself through the channel
 * every `heartbeatMs`: no heartbeat back within `lostAfterMs` means the connection is lost. Then the
 * follower is told to forget everything (announcements sent meanwhile are gone), the subscription is
 * dropped and made again every `retryMs`, and once a heartbeat comes back it is told once more (writes
 * between the loss and the new LISTEN were not heard either).
 */
export const makeChangeFeedPg = (timing: ChangeFeedTiming = DEFAULT_CHANGE_FEED_TIMING) =>
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const sql = yield* SqlClient.SqlClient
    const hostId = randomBytes(9).toString("base64url")
    const ownChange = `change:${hostId}`
    const ownBeat = `beat:${hostId}`
    const notify = (payload: string) => sql`SELECT pg_notify(${CHANNEL}, ${payload})`.pipe(Effect.asVoid)

    const publish = notify(ownChange).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Could not announce a write to other hosts", Cause.pretty(cause)))
    )

    /** One subscription: fails when it is lost (or cannot be made); never succeeds. */
    const session = (onChange: (reason: ChangeReason) => void) =>
      Effect.gen(function*() {
        let lastBeat = 0
        const listening = yield* Deferred.make<void>()
        const received = (payload: string) => {
          if (payload === ownBeat) {
            lastBeat = Date.now()
            Deferred.unsafeDone(listening, Exit.void)
          } else if (payload.startsWith("change:") && payload !== ownChange) {
            onChange("change")
          }
        }
        // Daemon, interrupted without waiting: on a dead connection the driver's UNLISTEN may hang.
        const listener = yield* pg.listen(CHANNEL).pipe(
          Stream.runForEach((payload) => Effect.sync(() => received(payload))),
          Effect.zipRight(Effect.fail(new Error("the listening stream ended"))),
          Effect.forkDaemon
        )
        yield* Effect.addFinalizer(() => Fiber.interruptFork(listener))
        const startedAt = Date.now()
        const beats = Effect.gen(function*() {
          for (;;) {
            yield* notify(ownBeat).pipe(Effect.ignore)
            yield* Effect.sleep(timing.heartbeatMs)
            const since = Math.max(lastBeat, startedAt)
            if (Date.now() - since > timing.lostAfterMs) {
              return yield* Effect.fail(new Error(`no heartbeat for ${Date.now() - since} ms`))
            }
          }
        })
        const established = Deferred.await(listening).pipe(
          Effect.zipRight(Effect.sync(() => onChange("resync"))),
          Effect.zipRight(Effect.logInfo("Listening for other hosts' writes")),
          Effect.zipRight(Effect.never)
        )
        // Whichever ends first ends the session, failures included (a lost heartbeat, a failed stream).
        return yield* Effect.raceFirst(beats, Effect.raceFirst(Fiber.join(listener), established))
      }).pipe(Effect.scoped)

    const follow = (onChange: (reason: ChangeReason) => void): Effect.Effect<never> => {
      // One warning per outage, not one per attempt.
      let failures = 0
      return session((reason) => {
        failures = 0
        onChange(reason)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.sync(() => onChange("resync")).pipe(
            Effect.zipRight(
              failures++ === 0
                ? Effect.logWarning("Lost the subscription to other hosts' writes; forgot what was remembered, listening again", Cause.pretty(cause))
                : Effect.void
            ),
            Effect.zipRight(Effect.sleep(timing.retryMs))
          )),
        Effect.forever
      )
    }

    return { publish, follow }
  })

/** The feed on the host's PostgreSQL server. */
export const ChangeFeedPg = (timing?: ChangeFeedTiming) => Layer.effect(ChangeFeed, makeChangeFeedPg(timing))

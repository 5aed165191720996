import { describe, expect } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { AccountId, EventId, SaleId } from "../../domain/Ids.js"
import { WebhookEvent } from "../../domain/WebhookEvent.js"
import { Outbox } from "../../ports/Outbox.js"
import { Transactor } from "../../ports/Transactor.js"
import { anEvent, at, unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const minutes = (base: Date, n: number) => new Date(base.getTime() + n * 60_000)
const FAR_FUTURE = at("2999-01-01T00:00:00.000Z")

/**
 * `claimDue` sees every account's events, so each test starts and ends with no pending event in the store:
 * it cancels its own account's pending events when done, pass or fail.
 */
const isolated = <A, E, R>(accountId: AccountId, test: Effect.Effect<A, E, R>) =>
  Effect.ensuring(test, Effect.orDie(Effect.flatMap(Outbox, (outbox) => outbox.cancelPending(accountId))))

const ids = (events: ReadonlyArray<WebhookEvent>) => events.map((e) => e.id)

/** The Outbox port's guarantees, for any adapter. */
export const OutboxContract = (it: ContractIt<Outbox | Transactor>, backend: Backend) =>
  describe("Outbox", () => {
    it.effect("enqueues events and finds them by id and by sale", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const saleId = SaleId.make(`sale_${unique()}`)
        const first = anEvent({ accountId, saleId, createdAt: at("2024-03-01T10:00:00.000Z"), body: "{\"n\":1,\"é\":\"✓\"}" })
        const second = anEvent({ accountId, saleId, createdAt: at("2024-03-01T10:00:01.000Z") })
        yield* outbox.enqueue(first)
        yield* outbox.enqueue(second)
        yield* outbox.enqueue(anEvent({ accountId }))
        expect(yield* outbox.findById(first.id)).toStrictEqual(Option.some(first))
        expect(yield* outbox.findById(EventId.make(`evt_${unique()}`))).toStrictEqual(Option.none())
        expect(yield* outbox.findBySale(saleId)).toStrictEqual([first, second])
        expect(yield* outbox.findBySale(SaleId.make(`sale_${unique()}`))).toStrictEqual([])
      }))
    })

    it.effect("claims due pending events, earliest first, at most `limit`, and leases them", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const now = at("2030-01-01T12:00:00.000Z")
        const lease = minutes(now, 1)
        const due = [3, 1, 2].map((n) => anEvent({ accountId, nextAttemptAt: minutes(now, -n) }))
        const notYet = anEvent({ accountId, nextAttemptAt: minutes(now, 1) })
        const delivered = anEvent({ accountId, status: "delivered", attempts: 1, nextAttemptAt: minutes(now, -9) })
        const failed = anEvent({ accountId, status: "failed", attempts: 7, nextAttemptAt: minutes(now, -9) })
        for (const e of [...due, notYet, delivered, failed]) yield* outbox.enqueue(e)
        const earliestFirst = [due[0]!, due[2]!, due[1]!]

        const claimed = yield* outbox.claimDue(now, 2, lease)
        // Callers get each event as it was when claimed; the store keeps the lease.
        expect(claimed).toStrictEqual(earliestFirst.slice(0, 2))
        for (const e of claimed) {
          expect(Option.getOrThrow(yield* outbox.findById(e.id)).nextAttemptAt).toStrictEqual(lease)
        }
        expect(yield* outbox.claimDue(now, 10, lease)).toStrictEqual([earliestFirst[2]!])
        expect(yield* outbox.claimDue(now, 10, lease)).toStrictEqual([])
        // When the lease runs out unfinished the events are due again, with the event that was not yet due.
        expect(ids(yield* outbox.claimDue(lease, 10, minutes(lease, 1))).sort())
          .toStrictEqual(ids([...earliestFirst, notYet]).sort())
      }))
    })

    it.effect("stops claiming an event once it is updated as delivered", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const now = at("2030-02-01T00:00:00.000Z")
        const event = anEvent({ accountId, nextAttemptAt: minutes(now, -1) })
        yield* outbox.enqueue(event)
        const [claimed] = yield* outbox.claimDue(now, 10, minutes(now, 1))
        const done = new WebhookEvent({
          ...claimed!,
          status: "delivered",
          attempts: 1,
          lastError: null,
          firstAttemptAt: now,
          nextAttemptAt: now
        })
        yield* outbox.update(done)
        expect(yield* outbox.findById(event.id)).toStrictEqual(Option.some(done))
        expect(yield* outbox.claimDue(FAR_FUTURE, 10, FAR_FUTURE)).toStrictEqual([])
      }))
    })

    it.effect("records an attempt's outcome only while the event is pending under the caller's lease", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const now = at("2030-02-15T00:00:00.000Z")
        const lease = minutes(now, 1)
        const kept = anEvent({ accountId, nextAttemptAt: minutes(now, -1) })
        const cancelled = anEvent({ accountId, nextAttemptAt: minutes(now, -2) })
        yield* outbox.enqueue(kept)
        yield* outbox.enqueue(cancelled)
        expect(ids(yield* outbox.claimDue(now, 10, lease)).sort()).toStrictEqual(ids([kept, cancelled]).sort())
        const retry = (e: WebhookEvent) =>
          new WebhookEvent({ ...e, attempts: 1, lastError: "HTTP 500", firstAttemptAt: now, nextAttemptAt: minutes(now, 2) })

        // Under its lease: recorded.
        expect(yield* outbox.recordAttempt(retry(kept), lease)).toBe(true)
        expect(yield* outbox.findById(kept.id)).toStrictEqual(Option.some(retry(kept)))
        // Cancelled while in flight (the webhook removed): the late outcome changes nothing.
        yield* outbox.update(new WebhookEvent({ ...cancelled, status: "cancelled", nextAttemptAt: lease }))
        expect(yield* outbox.recordAttempt(retry(cancelled), lease)).toBe(false)
        expect(Option.getOrThrow(yield* outbox.findById(cancelled.id)).status).toBe("cancelled")
        // A lease that is not the current one (claimed again, or reset by a redelivery): nothing changes.
        expect(yield* outbox.recordAttempt(new WebhookEvent({ ...kept, status: "delivered" }), lease)).toBe(false)
        expect(yield* outbox.findById(kept.id)).toStrictEqual(Option.some(retry(kept)))
      }))
    })

    it.effect("cancels only the account's pending events and counts them", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      const otherAccount = AccountId.make(`acct_${unique()}`)
      return isolated(otherAccount, isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const pending = [anEvent({ accountId }), anEvent({ accountId })]
        const delivered = anEvent({ accountId, status: "delivered" })
        const others = anEvent({ accountId: otherAccount })
        for (const e of [...pending, delivered, others]) yield* outbox.enqueue(e)
        expect(yield* outbox.cancelPending(accountId)).toBe(2)
        for (const e of pending) {
          expect(Option.getOrThrow(yield* outbox.findById(e.id)).status).toBe("cancelled")
        }
        expect(yield* outbox.findById(delivered.id)).toStrictEqual(Option.some(delivered))
        expect(yield* outbox.findById(others.id)).toStrictEqual(Option.some(others))
        expect(yield* outbox.cancelPending(accountId)).toBe(0)
        expect(ids(yield* outbox.claimDue(FAR_FUTURE, 10, FAR_FUTURE))).toStrictEqual([others.id])
      })))
    })

    it.effect("never gives two concurrent claimers the same event", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const tx = yield* Transactor
        const now = at("2030-03-01T00:00:00.000Z")
        const events = Array.from({ length: 20 }, (_, i) => anEvent({ accountId, nextAttemptAt: minutes(now, -i - 1) }))
        for (const e of events) yield* outbox.enqueue(e)
        // Each claimer holds its claim open for a while; PGlite and memory run them one after the other.
        const claimer = tx.withTransaction(Effect.zipLeft(outbox.claimDue(now, 10, minutes(now, 5)), Effect.sleep("100 millis")))
        const [a, b] = yield* Effect.all([claimer, claimer], { concurrency: 2 })
        expect(a).toHaveLength(10)
        expect(b).toHaveLength(10)
        expect(new Set([...ids(a), ...ids(b)])).toStrictEqual(new Set(ids(events)))
      }))
    })

    // PGlite runs one transaction at a time, so there a second claimer must wait for the first to commit.
    it.effect.skipIf(!backend.concurrentClaims)("lets a claimer take other events at once while another holds its claim (not on PGlite)", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const tx = yield* Transactor
        const now = at("2030-03-15T00:00:00.000Z")
        const lease = minutes(now, 5)
        const events = Array.from({ length: 6 }, (_, i) => anEvent({ accountId, nextAttemptAt: minutes(now, -i - 1) }))
        for (const e of events) yield* outbox.enqueue(e)
        const claimedFirst = yield* Deferred.make<ReadonlyArray<WebhookEvent>>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(tx.withTransaction(Effect.gen(function*() {
          yield* Deferred.succeed(claimedFirst, yield* outbox.claimDue(now, 3, lease))
          yield* Deferred.await(release)
        })))
        const first = yield* Deferred.await(claimedFirst)
        // On PostgreSQL the first claimer's rows stay locked until it commits: without SKIP LOCKED this waits.
        const second = yield* outbox.claimDue(now, 10, lease).pipe(Effect.timeoutOption("3 seconds"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        expect(first).toHaveLength(3)
        expect(Option.map(second, (s) => s.length)).toStrictEqual(Option.some(3))
        expect(new Set([...ids(first), ...ids(Option.getOrElse(second, () => []))])).toStrictEqual(new Set(ids(events)))
      }))
    })

    it.effect("spreads due events over many concurrent claimers, each event once", () => {
      const accountId = AccountId.make(`acct_${unique()}`)
      return isolated(accountId, Effect.gen(function*() {
        const outbox = yield* Outbox
        const now = at("2030-04-01T00:00:00.000Z")
        const events = Array.from({ length: 30 }, (_, i) => anEvent({ accountId, nextAttemptAt: minutes(now, -i - 1) }))
        for (const e of events) yield* outbox.enqueue(e)
        const claims = yield* Effect.all(
          Array.from({ length: 8 }, () => outbox.claimDue(now, 5, minutes(now, 5))),
          { concurrency: "unbounded" }
        )
        const claimed = claims.flatMap(ids)
        expect(claimed).toHaveLength(30)
        expect(new Set(claimed)).toStrictEqual(new Set(ids(events)))
      }))
    })
  })

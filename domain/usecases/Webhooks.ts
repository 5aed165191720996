import { Effect, Option } from "effect"
import { webhookSecretAad } from "../Account.js"
import type { Principal } from "../Credentials.js"
import { NotFound } from "../Errors.js"
import { count, webhookAttempts } from "../Metrics.js"
import { type EventId, IdPrefix, type SaleId } from "../Ids.js"
import { ATTEMPT_TIMEOUT_MS, latestEvent, WebhookEvent } from "../WebhookEvent.js"
import { isDelivered, nextAttemptAt } from "../rules/DeliveryPolicy.js"
import { saleSettledBody } from "../rules/SaleEvent.js"
import { now } from "../rules/Clock.js"
import { newId } from "./Minting.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Outbox } from "../../ports/Outbox.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { WebhookSender } from "../../ports/WebhookSender.js"

/**
 * How many events one pass claims. All of them are sent at once: an event claimed but left waiting for a free
 * slot could outlive its lease (a slow receiver, several rounds of 5 s) and be sent by another worker too.
 */
const BATCH = 64
/** A claim outlives the longest attempt, so no other worker takes an event that is being sent. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 5_000

/** An attempt's outcome as `repomarket_webhook_attempts_total` labels it. */
const outcomeOf = (event: WebhookEvent): string =>
  event.status === "pending" ? "retrying" : event.status

/**
 * `sale.settled` delivery from the durable outbox: claim due events (leased, so several workers never send
 * one event at the same time), POST each signed with the account's current secret, record the outcome.
 * Retries grow for about 30 s from the first attempt, 5 s per attempt, then the event is marked failed.
 */
export class Webhooks extends Effect.Service<Webhooks>()("repomarket/Webhooks", {
  effect: Effect.gen(function*() {
    const outbox = yield* Outbox
    const accounts = yield* AccountStore
    const ledger = yield* SaleLedger
    const sender = yield* WebhookSender
    const box = yield* SecretBox

    /**
     * One attempt on an event claimed under `leaseUntil`. Its outcome is recorded only if the event is still
     * ours (`recordAttempt`): removing the webhook, or asking for a redelivery, while the POST is in flight
     * wins over the late outcome, so a cancelled event stays cancelled and is never sent again.
     */
    const attempt = Effect.fnUntraced(function*(event: WebhookEvent, leaseUntil: Date) {
      const record = (outcome: WebhookEvent) =>
        Effect.flatMap(outbox.recordAttempt(outcome, leaseUntil), (recorded) =>
          // Counted when the outcome is the event's (a removal or redelivery that won meanwhile is not).
          recorded ? count(webhookAttempts, { outcome: outcomeOf(outcome) }) : Effect.void)
      const account = Option.getOrNull(yield* accounts.findById(event.accountId))
      if (account?.webhookUrl == null || account.webhookSecret === null) {
        // The webhook was removed after this event was queued.
        return yield* record(new WebhookEvent({ ...event, status: "cancelled" }))
      }
      const secret = yield* box.open(account.webhookSecret, webhookSecretAad(account)).pipe(Effect.orDie)
      const started = yield* now
      const result = yield* Effect.either(sender.post({
        url: account.webhookUrl,
        body: event.body,
        secret,
        timestamp: Math.floor(started.getTime() / 1000),
        timeoutMs: ATTEMPT_TIMEOUT_MS
      }))
      const at = yield* now
      const first = event.firstAttemptAt ?? started
      const attempts = event.attempts + 1
      if (result._tag === "Right" && isDelivered(result.right.status)) {
        return yield* record(new WebhookEvent({ ...event, status: "delivered", attempts, firstAttemptAt: first, lastError: null }))
      }
      const lastError = result._tag === "Right" ? `HTTP ${result.right.status}` : `${result.left.reason}: ${result.left.message}`
      const next = nextAttemptAt(first, attempts, at)
      yield* record(new WebhookEvent({
        ...event,
        attempts,
        firstAttemptAt: first,
        lastError,
        status: next === null ? "failed" : "pending",
        nextAttemptAt: next ?? at
      }))
    })

    /** One pass: claims what is due and delivers it. Returns how many events were attempted. */
    const deliverDue = Effect.fn("Webhooks.deliverDue")(function*() {
      const at = yield* now
      const leaseUntil = new Date(at.getTime() + LEASE_MS)
      const due = yield* outbox.claimDue(at, BATCH, leaseUntil)
      yield* Effect.forEach(due, (event) => attempt(event, leaseUntil), { concurrency: "unbounded", discard: true })
      return due.length
    })

    /** `POST /my/sales/<id>/redeliver`: the same event again, signed with a fresh timestamp, a fresh window. */
    const redeliver = Effect.fn("Webhooks.redeliver")(function*(principal: Principal, saleId: string) {
      const missing = new NotFound({ detail: "No settled sale with that id on this account." })
      const sale = yield* Effect.flatten(ledger.findById(saleId as SaleId)).pipe(Effect.mapError(() => missing))
      if (sale.accountId !== principal.accountId || sale.status !== "settled") return yield* missing
      const events = yield* outbox.findBySale(sale.id)
      const latest = latestEvent(events)
      const at = yield* now
      if (latest === null) {
        // Settled while no webhook was set: backfill its event now, if one is set now.
        const account = Option.getOrNull(yield* accounts.findById(principal.accountId))
        if (account?.webhookUrl == null) {
          return yield* new NotFound({ detail: "No webhook is set: set webhook_url on the account first." })
        }
        const id = yield* newId<EventId>(IdPrefix.event).pipe(Effect.provideService(SecretBox, box))
        const fresh = new WebhookEvent({
          id, accountId: account.id, saleId: sale.id, body: saleSettledBody(id, sale, at), status: "pending",
          attempts: 0, lastError: null, createdAt: at, firstAttemptAt: null, nextAttemptAt: at
        })
        yield* outbox.enqueue(fresh)
        return fresh
      }
      const reset = new WebhookEvent({ ...latest, status: "pending", attempts: 0, lastError: null, firstAttemptAt: null, nextAttemptAt: at })
      yield* outbox.update(reset)
      return reset
    })

    return { deliverDue, redeliver } as const
  })
}) {}

import { Effect, Option, Schedule } from "effect"
import { type EventId, IdPrefix } from "../Ids.js"
import { count, salesFailed, salesSettled } from "../Metrics.js"
import { Sale } from "../Sale.js"
import { WebhookEvent } from "../WebhookEvent.js"
import { saleSettledBody } from "../rules/SaleEvent.js"
import { now } from "../rules/Clock.js"
import { newId } from "./Minting.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { PaymentFacilitator, type Settlement } from "../../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { ReceiptSigner } from "../../ports/ReceiptSigner.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { isStorageError } from "../../ports/StorageError.js"
import { makeSaleDelivery } from "./purchases/SaleReceipt.js"

/** How long the outcome of a settlement is retried through a storage outage before the request gives up. */
const RECORD_RETRY = Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("2 seconds")), Schedule.upTo("30 seconds"))

/**
 * How long past `settleBy` an unsettled payment is still given before it is failed: an RPC node may lag the
 * chain by a few blocks, and a block's time is the producer's clock, not ours.
 */
export const SETTLE_BY_MARGIN_MS = 60_000

/**
 * Writes the outcome of a settle call: once money may have moved, a storage failure (the ports'
 * `StorageError`) is retried for a while rather than given up on. Each write is atomic, so a failed attempt
 * left nothing behind. Nothing else is retried: a defect (a bug) or another failure is passed on at once.
 */
export const durably = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.retry(write, { schedule: RECORD_RETRY, while: isStorageError })

/** A sale's metric labels: its mode and chain (fixed sets). */
const saleLabels = (sale: Sale) => ({ livemode: String(sale.livemode), chain: sale.chain })

/**
 * The end of a sale's life: pending → settled (with its `sale.settled` event queued in the same atomic
 * write) or pending → failed. Shared by the purchase that settles, the buyer's retry and the reconciler, so
 * whichever gets there first moves the sale and the others see the result: never two events for one sale,
 * never a settled sale marked failed.
 */
export class Settlements extends Effect.Service<Settlements>()("repomarket/Settlements", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const ledger = yield* SaleLedger
    const facilitators = yield* PaymentFacilitator
    const box = yield* SecretBox
    const deliveryOf = makeSaleDelivery(yield* CodeHost, yield* ReceiptSigner, (yield* PublicOrigin).baseUrl)

    const stored = (pending: Sale) => Effect.map(ledger.findById(pending.id), Option.getOrElse(() => pending))

    /**
     * Marks the sale settled and queues its `sale.settled` event (if the account has a webhook) in one atomic
     * write. Answers the sale as stored afterwards: settled by this call, or by whoever got there first.
     */
    const markSettled = Effect.fn("Settlements.markSettled")(function*(pending: Sale, settlement: Settlement) {
      const at = yield* now
      const settled = new Sale({
        ...pending,
        status: "settled",
        // A refusal noted while the chain had not spoken is not the sale's outcome.
        failureReason: null,
        transaction: settlement.transaction ?? pending.transaction,
        payer: settlement.payer ?? pending.payer,
        settledAt: at
      })
      const eventId = yield* newId<EventId>(IdPrefix.event).pipe(Effect.provideService(SecretBox, box))
      // Retried as a whole with the same event id: a repeat can never queue a second event (had an attempt
      // committed unseen, the sale is no longer pending and the repeat writes nothing).
      const moved = yield* durably(Effect.gen(function*() {
        // Stryker disable next-line ConditionalExpression: a sale without an account has no webhook either way; this only skips a lookup
        const account = pending.accountId === null ? null : Option.getOrNull(yield* accounts.findById(pending.accountId))
        // What the buyer's download is vouched for with, computed only for an account that gets the event.
        const delivery = account?.webhookUrl ? yield* deliveryOf(settled) : undefined
        const event = account?.webhookUrl
          ? Option.some(new WebhookEvent({
            id: eventId,
            accountId: account.id,
            saleId: settled.id,
            body: saleSettledBody(eventId, settled, at, delivery),
            status: "pending",
            attempts: 0,
            lastError: null,
            createdAt: at,
            firstAttemptAt: null,
            nextAttemptAt: at
          }))
          : Option.none()
        return yield* ledger.settle(settled, event)
      }))
      if (!moved) return yield* stored(pending)
      yield* count(salesSettled, saleLabels(settled))
      return settled
    })

    /** Marks the sale failed (only while pending). Answers the sale as stored afterwards. */
    const markFailed = Effect.fn("Settlements.markFailed")(function*(pending: Sale, reason: string) {
      const moved = yield* durably(ledger.markFailed(pending.id, reason))
      if (!moved) return yield* stored(pending)
      yield* count(salesFailed, saleLabels(pending))
      return new Sale({ ...pending, status: "failed", failureReason: reason })
    })

    /**
     * Resolves a pending sale from what the chain says now: settled → settled (event queued once); spent
     * otherwise → failed with the chain's reason; not settled and past its `settleBy` → failed (it can never
     * settle any more), with the facilitator's refusal as its reason when one was noted; otherwise (not yet, not
     * final yet, nobody can tell) it stays pending, a refused one too.
     * A sale that is not pending is answered as it is.
     */
    const resolve = Effect.fn("Settlements.resolve")(function*(sale: Sale) {
      const current = yield* stored(sale)
      if (current.status !== "pending") return current
      const facilitator = current.livemode ? Option.getOrNull(facilitators.live) : facilitators.test
      if (facilitator === null) return current
      // The time is taken before the chain is asked: "unsettled" then holds from a moment past `settleBy`.
      const askedAt = yield* now
      const status = yield* facilitator.status(current)
      switch (status._tag) {
        case "Settled":
          // Stryker disable next-line BooleanLiteral,StringLiteral: markSettled reads only the transaction and the payer
          return yield* markSettled(current, { success: true, transaction: status.transaction, network: current.network, payer: current.payer, errorReason: null })
        case "Unsettled":
          return current.settleBy !== null && askedAt.getTime() > current.settleBy.getTime() + SETTLE_BY_MARGIN_MS
            ? yield* markFailed(current, current.failureReason ?? "not_settled_before_expiry")
            : current
        case "Failed":
          // What the buyer signed was spent otherwise (final on chain): this sale can never settle.
          return yield* markFailed(current, status.reason)
        case "NotFinal":
        case "Unknown":
          return current
      }
    })

    /**
     * Notes the facilitator's refusal of a pending sale's settle, which stays pending: only the chain can say the
     * authorization can no longer move money (see `resolve`).
     */
    const noteRefusal = Effect.fn("Settlements.noteRefusal")(function*(pending: Sale, reason: string) {
      yield* durably(ledger.noteRefusal(pending.id, reason))
      return new Sale({ ...pending, failureReason: reason })
    })

    return { markSettled, markFailed, noteRefusal, resolve } as const
  })
}) {}

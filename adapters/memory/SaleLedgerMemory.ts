import { Effect, Layer, Option } from "effect"
import type { Delivery } from "../../domain/Delivery.js"
import type { DeliveryId, SaleId } from "../../domain/Ids.js"
import type { ArchiveDigest } from "../../domain/ReceiptClaims.js"
import { Sale } from "../../domain/Sale.js"
import { SaleLedger, type SaleTotal } from "../../ports/SaleLedger.js"
import { OutboxEvents } from "./OutboxMemory.js"

/** Cursor: the position after the last sale of a page, as `<createdAt ms>:<id>`. */
const cursorOf = (sale: Sale) => Buffer.from(JSON.stringify([sale.createdAt.getTime(), sale.id])).toString("base64url")
const newestFirst = (a: Sale, b: Sale) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)

/** Needs the memory outbox's events (`OutboxEvents`): `settle` queues its event there. */
export const SaleLedgerMemory = Layer.effect(SaleLedger, Effect.gen(function*() {
  const events = yield* OutboxEvents
  const sales = new Map<SaleId, Sale>()
  const byKey = new Map<string, SaleId>()
  const deliveries = new Map<DeliveryId, Delivery>()
  /** Receipt id (the sale's, or an update delivery's) → the archive it delivered. */
  const archives = new Map<string, ArchiveDigest>()
  return {
    recordDigest: ({ deliveryId, digest, saleId }) =>
      Effect.sync(() => {
        // Only a receipt on the ledger (a database refuses the row by its foreign keys).
        if (!sales.has(saleId) || (deliveryId !== null && deliveries.get(deliveryId)?.saleId !== saleId)) return false
        const receipt = deliveryId ?? saleId
        if (archives.has(receipt)) return false
        archives.set(receipt, { sha256: digest.sha256, size: digest.size })
        return true
      }),
    findDigest: (receipt) => Effect.sync(() => Option.fromNullable(archives.get(receipt))),
    recordDelivery: (delivery) =>
      Effect.sync(() => {
        if (!sales.has(delivery.saleId)) throw new Error(`recordDelivery: no sale ${delivery.saleId}`)
        const same = [...deliveries.values()].find((d) => d.saleId === delivery.saleId && d.commitSha === delivery.commitSha)
        if (same !== undefined) return { delivery: same, created: false }
        deliveries.set(delivery.id, delivery)
        return { delivery, created: true }
      }),
    findDelivery: (id) => Effect.sync(() => Option.fromNullable(deliveries.get(id))),
    listDeliveries: (saleIds) =>
      Effect.sync(() =>
        [...deliveries.values()]
          .filter((d) => saleIds.includes(d.saleId))
          .sort((a, b) => (a.saleId < b.saleId ? -1 : a.saleId > b.saleId ? 1 : a.deliveredAt.getTime() - b.deliveredAt.getTime()))
      ),
    recordPending: (sale) =>
      Effect.sync(() => {
        const existing = byKey.get(sale.paymentKey)
        if (existing) return { sale: sales.get(existing)!, created: false }
        if (sale.paymentIdDigest !== null) {
          for (const s of sales.values()) {
            if (s.network === sale.network && s.payer === sale.payer && s.paymentIdDigest === sale.paymentIdDigest) {
              throw new Error("recordPending: this payer already used that payment id on this network")
            }
          }
        }
        sales.set(sale.id, sale)
        byKey.set(sale.paymentKey, sale.id)
        return { sale, created: true }
      }),
    noteRefusal: (id, reason) =>
      Effect.sync(() => {
        const stored = sales.get(id)
        if (stored === undefined || stored.status !== "pending") return false
        sales.set(id, new Sale({ ...stored, failureReason: reason }))
        return true
      }),
    markFailed: (id, reason) =>
      Effect.sync(() => {
        const stored = sales.get(id)
        if (stored === undefined || stored.status !== "pending") return false
        sales.set(id, new Sale({ ...stored, status: "failed", failureReason: reason }))
        return true
      }),
    // Checks first, then writes both in one synchronous step: no other fiber sees one write without the other.
    settle: (sale, event) =>
      Effect.suspend(() => {
        if (sales.get(sale.id)?.status !== "pending") return Effect.succeed(false)
        const owner = byKey.get(sale.paymentKey)
        if (owner !== undefined && owner !== sale.id) {
          return Effect.die(new Error(`settle: payment key ${sale.paymentKey} belongs to another sale`))
        }
        if (Option.isSome(event) && events.has(event.value.id)) {
          return Effect.die(new Error(`settle: event ${event.value.id} is already queued`))
        }
        sales.set(sale.id, sale)
        if (Option.isSome(event)) events.set(event.value.id, event.value)
        return Effect.succeed(true)
      }),
    findById: (id) => Effect.sync(() => Option.fromNullable(sales.get(id))),
    findByPaymentKey: (key) =>
      Effect.sync(() => Option.fromNullable(byKey.get(key)).pipe(Option.flatMapNullable((id) => sales.get(id)))),
    findByPaymentId: (network, payer, digest) =>
      Effect.sync(() =>
        Option.fromNullable([...sales.values()].find((s) => s.network === network && s.payer === payer && s.paymentIdDigest === digest))
      ),
    findSettledByPayer: ({ chain, listingId, livemode, payer }) =>
      Effect.sync(() => {
        const samePayer = (stored: string) => chain === "base" ? stored.toLowerCase() === payer.toLowerCase() : stored === payer
        const found = [...sales.values()]
          .filter((s) => s.listingId === listingId && s.livemode === livemode && s.chain === chain && s.status === "settled" && samePayer(s.payer))
          .sort((a, b) => (b.settledAt?.getTime() ?? 0) - (a.settledAt?.getTime() ?? 0) || (a.id < b.id ? 1 : -1))
        return Option.fromNullable(found[0])
      }),
    listPending: ({ after, createdBefore, limit }) =>
      Effect.sync(() =>
        [...sales.values()]
          .filter((s) => s.status === "pending" && s.createdAt.getTime() < createdBefore.getTime())
          .filter((s) =>
            after === undefined || s.createdAt.getTime() > after.createdAt.getTime() ||
            (s.createdAt.getTime() === after.createdAt.getTime() && s.id > after.id)
          )
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
          .slice(0, Math.max(0, limit))
      ),
    listByAccount: (accountId, { cursor, limit, livemode, status }) =>
      Effect.sync(() => {
        const all = [...sales.values()]
          .filter((s) =>
            s.accountId === accountId && (livemode === undefined || s.livemode === livemode) &&
            (status === undefined || s.status === status)
          )
          .sort(newestFirst)
        const start = cursor === undefined ? 0 : all.findIndex((s) => cursorOf(s) === cursor) + 1
        const page = all.slice(start, start + limit)
        const more = start + limit < all.length
        return { sales: page, nextCursor: more && page.length > 0 ? cursorOf(page[page.length - 1]!) : null }
      }),
    settledTotals: (accountId) =>
      Effect.sync(() => {
        const totals = new Map<string, SaleTotal>()
        for (const s of sales.values()) {
          if (s.accountId !== accountId || s.status !== "settled") continue
          const key = `${s.chain}:${s.livemode}`
          const t = totals.get(key) ?? { chain: s.chain, livemode: s.livemode, amount: 0n, count: 0 }
          totals.set(key, { ...t, amount: t.amount + s.amount, count: t.count + 1 })
        }
        return [...totals.values()]
      })
  }
}))

import { Context, type Effect, type Option } from "effect"
import type { Delivery } from "../domain/Delivery.js"
import type { AccountId, DeliveryId, ListingId, SaleId } from "../domain/Ids.js"
import type { ArchiveDigest } from "../domain/ReceiptClaims.js"
import type { Sale, SaleStatus } from "../domain/Sale.js"
import type { Chain } from "../domain/Wallet.js"
import type { WebhookEvent } from "../domain/WebhookEvent.js"
import type { StorageError } from "./StorageError.js"

/** Settled money of one chain and mode. */
export interface SaleTotal {
  /** The chain. */
  readonly chain: Chain
  /** Live (true) or test (false) sales. */
  readonly livemode: boolean
  /** Atomic USDC units. */
  readonly amount: bigint
  /** How many sales. */
  readonly count: number
}

/** One page of an account's sales. */
export interface SalePage {
  /** The sales, newest first. */
  readonly sales: ReadonlyArray<Sale>
  /** Opaque cursor for the next (older) page, null on the last page. */
  readonly nextCursor: string | null
}

/** Which settled sale `SaleLedger.findSettledByPayer` looks for. */
export interface SettledByPayer {
  /** The listing bought. */
  readonly listingId: ListingId
  /** Live (true) or test (false). */
  readonly livemode: boolean
  /** The chain it was paid on. */
  readonly chain: Chain
  /** The paying address. */
  readonly payer: string
}

/** The archive one receipt delivered: recorded with its goods, read back by its provenance. */
export interface DeliveredArchive {
  /** The settled sale. */
  readonly saleId: SaleId
  /** The update delivery the archive is of; null for the purchase's own commit. */
  readonly deliveryId: DeliveryId | null
  /** The archive's SHA-256 and size. */
  readonly digest: ArchiveDigest
}

/**
 * The ledger of record. One sale per payment key, enforced by the store itself. Every method fails with
 * `StorageError` when the store does (`unavailable` when the database did not answer).
 */
export class SaleLedger extends Context.Tag("repomarket/SaleLedger")<SaleLedger, {
  /** Records a pending sale, or returns the sale already recorded for the same payment key. */
  readonly recordPending: (sale: Sale) => Effect.Effect<{ readonly sale: Sale; readonly created: boolean }, StorageError>
  /**
   * Marks a pending sale failed with `reason`. Only a pending sale moves: true when this call moved it, false
   * when the sale is unknown or already settled or failed (a settled sale can never be marked failed).
   */
  readonly markFailed: (id: SaleId, reason: string) => Effect.Effect<boolean, StorageError>
  /**
   * Notes why the facilitator refused a pending sale's settle (its `failureReason`), leaving the sale pending: a
   * refusal is not the chain's word, and the buyer's authorization may still move money until it expires.
   * Only a pending sale is noted: true when this call noted it, false when the sale is unknown or not pending.
   */
  readonly noteRefusal: (id: SaleId, reason: string) => Effect.Effect<boolean, StorageError>
  /**
   * Writes a settled sale (replacing the stored sale with the same id) and, when `event` is given, queues
   * its `sale.settled` event in the Outbox, as one atomic write (one statement in SQL, no transaction
   * needed): both land or neither does. Only a pending sale moves: true when this call settled it; false,
   * with nothing written (the event included), when the sale is unknown or no longer pending. So of a
   * buyer's retry and the reconciler settling the same sale at once, exactly one queues the event.
   * The event's id is its key: a call whose event is already queued fails (a `StorageError`, or a defect) and
   * writes nothing.
   */
  readonly settle: (sale: Sale, event: Option.Option<WebhookEvent>) => Effect.Effect<boolean, StorageError>
  readonly findById: (id: SaleId) => Effect.Effect<Option.Option<Sale>, StorageError>
  readonly findByPaymentKey: (key: string) => Effect.Effect<Option.Option<Sale>, StorageError>
  /**
   * The sale a payer made with an x402 `payment-identifier` id (by its digest) on a network. One sale per
   * (network, payer, digest), enforced by the store: `recordPending` of a second one fails (a `StorageError`,
   * or a defect).
   */
  readonly findByPaymentId: (network: string, payer: string, digest: string) => Effect.Effect<Option.Option<Sale>, StorageError>
  /**
   * The newest settled sale of a listing that `payer` paid on `chain`, live or test: what a wallet that proves
   * itself (x402 Sign-In-With-X) may download again, at the commit it paid for, whatever became of the
   * listing's checkout since. EVM addresses compare case-insensitively (stored checksummed, signed in any
   * case); Solana addresses (base58, case-sensitive) compare exactly.
   */
  readonly findSettledByPayer: (query: SettledByPayer) => Effect.Effect<Option.Option<Sale>, StorageError>
  /**
   * Pending sales created before `createdBefore`, oldest first (by creation time, then id), after the position
   * `after` when given: the reconciler's work list, walked page by page so that sales it cannot resolve yet
   * never hide newer ones.
   */
  readonly listPending: (options: {
    readonly createdBefore: Date
    readonly limit: number
    readonly after?: { readonly createdAt: Date; readonly id: SaleId } | undefined
  }) => Effect.Effect<ReadonlyArray<Sale>, StorageError>
  /** Newest first, optionally only live or test sales, or only sales in one status. */
  readonly listByAccount: (
    accountId: AccountId,
    options: { readonly livemode?: boolean; readonly status?: SaleStatus; readonly cursor?: string; readonly limit: number }
  ) => Effect.Effect<SalePage, StorageError>
  /** Settled money per chain and mode: the dashboard's totals. */
  readonly settledTotals: (accountId: AccountId) => Effect.Effect<ReadonlyArray<SaleTotal>, StorageError>
  /**
   * Records an update delivery (a newer commit delivered for a settled sale within its update window), or
   * returns the delivery already recorded for the same sale and commit: one per (sale, commit), enforced by the
   * store, so concurrent requests for the same update record it once and answer the same receipt.
   */
  readonly recordDelivery: (delivery: Delivery) => Effect.Effect<{ readonly delivery: Delivery; readonly created: boolean }, StorageError>
  /** An update delivery by its id. */
  readonly findDelivery: (id: DeliveryId) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /** The update deliveries of these sales, oldest first per sale (the dashboard's "updates delivered"). */
  readonly listDeliveries: (saleIds: ReadonlyArray<SaleId>) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /**
   * Records the archive a receipt delivered (the sale's own, or an update delivery's when `deliveryId` is given),
   * once its digest is known as its goods go out: what that receipt's provenance attests, read back without
   * downloading anything. The first record of a receipt stays: true when this call recorded it, false when one
   * was recorded already (left as it was). Only a receipt on the ledger is recorded: its sale (and delivery) first.
   */
  readonly recordDigest: (archive: DeliveredArchive) => Effect.Effect<boolean, StorageError>
  /** The archive recorded for a receipt: by the sale's id (its own commit) or an update delivery's id. */
  readonly findDigest: (receipt: SaleId | DeliveryId) => Effect.Effect<Option.Option<ArchiveDigest>, StorageError>
}>() {}

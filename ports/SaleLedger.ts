import { Context, type Effect, type Option } from "effect"
import type { AccountId, SaleId } from "../domain/Ids.js"
import type { Sale, SaleStatus } from "../domain/Sale.js"
import type { Chain } from "../domain/Wallet.js"

export interface SaleTotal {
  readonly chain: Chain
  readonly livemode: boolean
  /** Atomic USDC units. */
  readonly amount: bigint
  readonly count: number
}

export interface SalePage {
  readonly sales: ReadonlyArray<Sale>
  /** Opaque cursor for the next (older) page, null on the last page. */
  readonly nextCursor: string | null
}

/** The ledger of record. One sale per payment key, enforced by the store itself. */
export class SaleLedger extends Context.Tag("ports/SaleLedger")<SaleLedger, {
  /** Records a pending sale, or returns the sale already recorded for the same payment key. */
  readonly recordPending: (sale: Sale) => Effect.Effect<{ readonly sale: Sale; readonly created: boolean }>
  readonly update: (sale: Sale) => Effect.Effect<void>
  readonly findById: (id: SaleId) => Effect.Effect<Option.Option<Sale>>
  readonly findByPaymentKey: (key: string) => Effect.Effect<Option.Option<Sale>>
  /** Newest first, optionally only live or test sales, or only sales in one status. */
  readonly listByAccount: (
    accountId: AccountId,
    options: { readonly livemode?: boolean; readonly status?: SaleStatus; readonly cursor?: string; readonly limit: number }
  ) => Effect.Effect<SalePage>
  /** Settled money per chain and mode: the dashboard's totals. */
  readonly settledTotals: (accountId: AccountId) => Effect.Effect<ReadonlyArray<SaleTotal>>
}>() {}

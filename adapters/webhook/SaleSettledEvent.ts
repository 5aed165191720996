/**
 * The `sale.settled` webhook body as a receiver parses it (DECISIONS.md; built by `domain/rules/SaleEvent.ts`).
 * Plain types with no runtime part, so a receiver depends on nothing of repomarket but these lines.
 */

/** The networks a sale settles on: Base and Solana, live or the test twin's. */
export type SaleNetwork = "eip155:8453" | "eip155:84532" | "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" | "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" | (string & {})

/** What was sold, for how much, paid by whom, settled in which transaction. */
export interface SaleSettledData {
  /** The sale's id (`sal_…`), stable across retries and redeliveries. */
  readonly sale_id: string
  /** `owner/name` of the repository sold. */
  readonly repo: string
  /** The price in US dollars as a decimal string, e.g. `"12.00"`. */
  readonly amount_usd: string
  /** The price in the asset's atomic units (USDC: 6 decimals) as a decimal string; exact, never a float. */
  readonly amount: string
  /** The token paid: the USDC contract (Base) or mint (Solana) address. */
  readonly asset: string
  /** CAIP-2 network id. */
  readonly network: SaleNetwork
  /** The paying wallet. */
  readonly payer: string
  /** The settlement transaction (hash or signature; `sim_…` on the test twin). */
  readonly transaction: string
}

/** One `sale.settled` delivery: dedupe by `id` (a retry or a redelivery sends the same id). */
export interface SaleSettledEvent {
  /** The event's id (`evt_…`): the same for every attempt and redelivery of this event. */
  readonly id: string
  /** The event type; the only one sent today. */
  readonly type: "sale.settled"
  /** When the event was created, in Unix seconds. */
  readonly created: number
  /** false for test-twin sales (simulated money). */
  readonly livemode: boolean
  /** The sale. */
  readonly data: SaleSettledData
}

/** Every event type repomarket sends (one today). */
export type WebhookEventBody = SaleSettledEvent

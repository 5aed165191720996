import type { Redacted } from "effect"

/** `POST /repos` as the contract names its fields. */
export interface CreateListingInput {
  /** `https://github.com/<owner>/<repo>`. */
  readonly host_url: string
  /** The Base payout address. */
  readonly wallet_base?: string | undefined
  /** The Solana payout address. */
  readonly wallet_solana?: string | undefined
  /** The price in US dollars, like `12.00`; without one the listing does not sell yet. */
  readonly price_usd?: string | undefined
  /** A read-only code-host token, needed for a private repo; stored sealed. */
  readonly host_pat?: Redacted.Redacted<string> | undefined
  /** The update window in days after purchase, 0 to 3650; absent: 0 for a new listing, kept on a re-listing. */
  readonly updates_days?: number | undefined
}

/** `PATCH /repos/<owner>/<repo>`: every field three-state. */
export interface UpdateListingInput {
  /** The Base payout address. */
  readonly wallet_base?: string | undefined
  /** The Solana payout address. */
  readonly wallet_solana?: string | undefined
  /** The price in US dollars, like `12.00`. */
  readonly price_usd?: string | undefined
  /** The read-only code-host token; stored sealed. */
  readonly host_pat?: Redacted.Redacted<string> | undefined
  /** The update window in days after purchase, 0 to 3650; `null` resets it to 0 (no updates). */
  readonly updates_days?: number | null | undefined
}

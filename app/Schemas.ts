import { Schema } from "effect"
import { UpdatesDays, updatesDaysProblem } from "../domain/Listing.js"
import { CATEGORIES } from "../domain/rules/Category.js"

/**
 * Request and response bodies as the contract names their fields (snake_case). Requests reject unknown
 * fields so a typo (`wallet_bse`) is a 400, not a silent no-op; limits keep absurd input out early.
 */
const strict = { parseOptions: { onExcessProperty: "error" as const, errors: "all" as const } }
const bounded = (max: number) => Schema.String.pipe(Schema.maxLength(max))
const Redacted = (max: number) => Schema.Redacted(bounded(max))

export const MagicLinkRequest = Schema.Struct({ email: bounded(320) }).annotations(strict)
export const MagicLinkSent = Schema.Struct({
  sent: Schema.Literal(true),
  delivery: Schema.Literal("email", "log").annotations({
    description: "`email`: the link is mailed to the address. `log`: this server sends no mail (no SMTP_URL) and wrote the link to its log, for its operator to pass on."
  })
})

export const VerifyRequest = Schema.Struct({ token: Redacted(256) }).annotations(strict)
export const SessionResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_at: Schema.String,
  account: Schema.Struct({ id: Schema.String, email: Schema.String })
})

export const CreatedKey = Schema.Struct({ id: Schema.String, key: Schema.String, created_at: Schema.String })
export const KeyList = Schema.Struct({
  keys: Schema.Array(Schema.Struct({
    id: Schema.String,
    last4: Schema.String,
    created_at: Schema.String,
    last_used_at: Schema.NullOr(Schema.String)
  }))
})

const walletFields = {
  wallet_base: Schema.optional(bounded(128)),
  wallet_solana: Schema.optional(bounded(128))
}

/** What a buyer gets from a listing's update window, said once for every field that carries it. */
const UPDATES_MEANING = "within that many days after their purchase settled, a buyer may fetch the listing's " +
  "current commit again without paying, as a new signed delivery; 0 = no updates after purchase. A buyer keeps " +
  "the window offered when they paid"
const updatesDays = UpdatesDays.annotations({ description: `Update window in days, 0 to 3650: ${UPDATES_MEANING}.` })

export const CreateListingRequest = Schema.Struct({
  host_url: bounded(512),
  ...walletFields,
  price_usd: Schema.optional(bounded(32)),
  host_pat: Schema.optional(Redacted(1024)),
  updates_days: Schema.optional(updatesDays.annotations({
    description: `Update window in days, 0 to 3650 (default 0; re-listing one's own repo without it keeps the window): ${UPDATES_MEANING}.`
  }))
}).annotations(strict)

export const UpdateListingRequest = Schema.Struct({
  ...walletFields,
  price_usd: Schema.optional(bounded(32)),
  host_pat: Schema.optional(Redacted(1024)),
  updates_days: Schema.optional(Schema.NullOr(updatesDays).annotations({
    message: () => ({ message: `${updatesDaysProblem}, or null`, override: true }),
    description: `Update window in days, 0 to 3650; absent keeps it, null resets it to 0 (changing it alone keeps the checkout; a change applies to later sales): ${UPDATES_MEANING}.`
  }))
}).annotations(strict)

export const CreatedListing = Schema.Struct({
  repo: Schema.String,
  page: Schema.String,
  checkout_url: Schema.String,
  test_checkout_url: Schema.String,
  selling: Schema.Boolean,
  note: Schema.String,
  updates_days: updatesDays
})

const Chain = Schema.Literal("base", "solana")

/** A listing as its owner sees it (never its token). */
export const ListingView = Schema.Struct({
  repo: Schema.String,
  page: Schema.String,
  host_url: Schema.String,
  private: Schema.Boolean,
  price_usd: Schema.NullOr(Schema.String),
  selling: Schema.Boolean,
  note: Schema.String,
  chains: Schema.Array(Chain),
  wallet_base: Schema.NullOr(Schema.String),
  wallet_solana: Schema.NullOr(Schema.String),
  has_host_pat: Schema.Boolean,
  updates_days: updatesDays,
  checkout_url: Schema.String,
  test_checkout_url: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
})

export const Stores = Schema.Struct({ stores: Schema.Array(ListingView) })

export const AccountPatchRequest = Schema.Struct({
  storefront_tagline: Schema.optional(bounded(1024)),
  webhook_url: Schema.optional(bounded(4096)),
  ...walletFields
}).annotations(strict)

export const AccountView = Schema.Struct({
  email: Schema.String,
  storefront_tagline: Schema.NullOr(Schema.String),
  webhook_url: Schema.NullOr(Schema.String),
  wallet_base: Schema.NullOr(Schema.String),
  wallet_solana: Schema.NullOr(Schema.String),
  host_login: Schema.NullOr(Schema.String)
})

export const AccountPatchResponse = Schema.Struct({
  ...AccountView.fields,
  webhook_secret: Schema.optional(Schema.String),
  listings_skipped: Schema.optional(Schema.Array(Schema.Struct({
    repo: Schema.String,
    reason: Schema.Literal("not_priced", "host_unreachable", "taken_down")
  })))
})

export const InventoryItem = Schema.Struct({
  repo: Schema.String,
  page: Schema.String,
  price_usd: Schema.NullOr(Schema.String),
  selling: Schema.Boolean,
  description: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  chains: Schema.Array(Chain)
})

export const IndexedItem = Schema.Struct({
  repo: Schema.String,
  host: Schema.String,
  description: Schema.String,
  language: Schema.NullOr(Schema.String),
  stars: Schema.Int,
  topics: Schema.Array(Schema.String),
  license: Schema.String,
  category: Schema.Literal(...CATEGORIES)
})

export const OwnerPage = Schema.Struct({
  owner: Schema.String,
  host: Schema.String,
  claimed: Schema.Boolean,
  storefront_tagline: Schema.NullOr(Schema.String),
  inventory: Schema.Array(InventoryItem),
  indexed: Schema.Array(IndexedItem),
  indexed_available: Schema.Boolean.annotations({
    description: "False when `indexed` could not be read from the code host, or was left out to keep the server's code-host quota for previews and purchases; `indexed_note` says which."
  }),
  indexed_note: Schema.NullOr(Schema.String),
  how_to_buy: Schema.String
})

export const RepoPage = Schema.Struct({
  repo: Schema.String,
  page: Schema.String,
  host_url: Schema.String,
  description: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  private: Schema.Boolean,
  price_usd: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String).annotations({ description: "Price in USDC atomic units (6 decimals)" }),
  currency: Schema.Literal("USDC"),
  selling: Schema.Boolean,
  note: Schema.String,
  chains: Schema.Array(Chain),
  checkout_url: Schema.String,
  test_checkout_url: Schema.String,
  preview_available: Schema.Boolean,
  default_branch: Schema.NullOr(Schema.String),
  commit: Schema.NullOr(Schema.String).annotations({ description: "The commit a purchase now delivers (the head of the default branch)" }),
  archive: Schema.NullOr(Schema.Struct({
    sha256: Schema.String.annotations({ description: "SHA-256 of the commit's .tar.gz, lower-case hex (as Repr-Digest and the signed receipt name it)" }),
    size: Schema.Int.annotations({ description: "Its size in bytes" })
  })).annotations({ description: "The archive of that commit, once a first one was cut; null before" }),
  updates_days: updatesDays,
  stars: Schema.NullOr(Schema.Int),
  topics: Schema.Array(Schema.String),
  license: Schema.NullOr(Schema.String),
  tree: Schema.NullOr(Schema.Struct({
    entries: Schema.Array(Schema.Struct({
      path: Schema.String,
      type: Schema.Literal("file", "dir"),
      size: Schema.NullOr(Schema.Int)
    })),
    truncated: Schema.Boolean
  })),
  readme: Schema.NullOr(Schema.Struct({ path: Schema.String, markdown: Schema.String, html: Schema.String })),
  how_to_buy: Schema.String
})

/** Path segments are printable ASCII: names and ids never hold anything else, and a NUL never reaches storage. */
const segment = (max: number) =>
  bounded(max).pipe(Schema.pattern(/^[\x21-\x7e]+$/, { message: () => "must be printable ASCII without spaces" }))
export const RepoPath = Schema.Struct({ owner: segment(100), repo: segment(200) })
export const OwnerPath = Schema.Struct({ owner: segment(100) })
export const KeyPath = Schema.Struct({ id: segment(64) })
export const CheckoutPath = Schema.Struct({ id: segment(64) })

export const SalesQuery = Schema.Struct({
  livemode: Schema.optional(Schema.Literal("true", "false")),
  cursor: Schema.optional(bounded(200)),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)))
})

export const SaleView = Schema.Struct({
  id: Schema.String,
  repo: Schema.String,
  amount_usd: Schema.String,
  amount: Schema.String.annotations({ description: "USDC atomic units (6 decimals)" }),
  network: Schema.String,
  asset: Schema.String,
  payer: Schema.String,
  transaction: Schema.NullOr(Schema.String),
  settled_at: Schema.String,
  livemode: Schema.Boolean,
  commit: Schema.NullOr(Schema.String).annotations({ description: "The commit the sale bought (null for a sale made before commits were pinned)" }),
  updates_days: Schema.Int.annotations({ description: "The update window the sale was sold with, in days after settlement (0: none)" }),
  updates: Schema.Array(Schema.Struct({
    id: Schema.String.annotations({ description: "The update delivery's id (dlv_…), named by its signed receipt" }),
    commit: Schema.String,
    delivered_at: Schema.String
  })).annotations({ description: "The newer commits delivered to the buyer within the window, oldest first: one per commit" }),
  webhook: Schema.Struct({
    status: Schema.Literal("none", "pending", "delivered", "failed", "cancelled"),
    attempts: Schema.Int,
    last_error: Schema.NullOr(Schema.String)
  })
})

export const SalesPage = Schema.Struct({
  sales: Schema.Array(SaleView),
  next_cursor: Schema.NullOr(Schema.String),
  totals: Schema.Array(Schema.Struct({
    chain: Schema.Literal("base", "solana"),
    livemode: Schema.Boolean,
    amount_usd: Schema.String,
    amount: Schema.String,
    count: Schema.Int
  }))
})

export const Redelivery = Schema.Struct({ event_id: Schema.String, status: Schema.Literal("pending") })
export const SalePath = Schema.Struct({ id: segment(64) })
export const DownloadPath = Schema.Struct({ token: segment(200) })

/** A checkout's query: `updates=latest` asks a re-download (by wallet proof or the buyer's id) for the listing's current commit. */
export const CheckoutQuery = Schema.Struct({
  updates: Schema.optional(Schema.Literal("latest").annotations({
    description: "With SIGN-IN-WITH-X, or a retry of the buyer's payment with its payment-identifier id: the listing's current commit within the purchase's update window (a new signed delivery) instead of the commit paid for; 403 with the reason past it."
  }))
})

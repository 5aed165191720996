import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The first schema. Rules the service depends on for correctness live here as constraints, not only in
 * application code: one live listing per repo, one sale per payment key, one account per email, unique
 * token digests. Tokens are stored only as digests or SecretBox ciphertexts; there is no plaintext column.
 * There are no foreign keys: listing and checkout reference each other, ports do not order their writes,
 * and the ledger keeps sales whatever happens to the listing.
 * Ids compare bytewise (COLLATE "C"): they break ties in "newest first" orders and cursors, which must not
 * depend on the server's locale.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE accounts (
    id text COLLATE "C" PRIMARY KEY,
    email text NOT NULL,
    storefront_tagline text,
    webhook_url text,
    webhook_secret text,
    wallet_base text,
    wallet_solana text,
    host_login text,
    created_at timestamptz NOT NULL,
    CONSTRAINT accounts_email_key UNIQUE (email)
  )`
  yield* sql`CREATE INDEX accounts_host_login_idx ON accounts (lower(host_login)) WHERE host_login IS NOT NULL`

  yield* sql`CREATE TABLE listings (
    id text COLLATE "C" PRIMARY KEY,
    owner text NOT NULL,
    name text NOT NULL,
    account_id text,
    host_url text NOT NULL,
    is_private boolean NOT NULL,
    description text,
    language text,
    price bigint,
    wallet_base text,
    wallet_solana text,
    host_pat text,
    checkout_id text NOT NULL,
    status text NOT NULL CHECK (status IN ('live', 'taken_down')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    taken_down_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX listings_one_live_per_repo
    ON listings (lower(owner), lower(name)) WHERE status = 'live'`
  yield* sql`CREATE INDEX listings_account_idx ON listings (account_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX listings_live_owner_idx ON listings (lower(owner)) WHERE status = 'live'`

  yield* sql`CREATE TABLE checkouts (
    id text COLLATE "C" PRIMARY KEY,
    listing_id text NOT NULL,
    owner text NOT NULL,
    name text NOT NULL,
    price bigint,
    wallet_base text,
    wallet_solana text,
    created_at timestamptz NOT NULL,
    voided_at timestamptz
  )`
  yield* sql`CREATE INDEX checkouts_listing_idx ON checkouts (listing_id)`

  yield* sql`CREATE TABLE magic_link_tokens (
    digest text PRIMARY KEY,
    email text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`

  yield* sql`CREATE TABLE sessions (
    id text COLLATE "C" PRIMARY KEY,
    digest text NOT NULL,
    account_id text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT sessions_digest_key UNIQUE (digest)
  )`

  yield* sql`CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,
    digest text NOT NULL,
    account_id text NOT NULL,
    last4 text NOT NULL,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT api_keys_digest_key UNIQUE (digest)
  )`
  yield* sql`CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at)`

  yield* sql`CREATE TABLE sales (
    id text COLLATE "C" PRIMARY KEY,
    payment_key text NOT NULL,
    listing_id text NOT NULL,
    checkout_id text NOT NULL,
    account_id text,
    repo text NOT NULL,
    livemode boolean NOT NULL,
    chain text NOT NULL CHECK (chain IN ('base', 'solana')),
    network text NOT NULL,
    asset text NOT NULL,
    amount bigint NOT NULL,
    pay_to text NOT NULL,
    payer text NOT NULL,
    commit_sha text,
    transaction text,
    status text NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
    failure_reason text,
    created_at timestamptz NOT NULL,
    settled_at timestamptz,
    CONSTRAINT sales_payment_key_key UNIQUE (payment_key)
  )`
  yield* sql`CREATE INDEX sales_account_idx ON sales (account_id, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE webhook_events (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL,
    sale_id text NOT NULL,
    body text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
    attempts integer NOT NULL,
    last_error text,
    created_at timestamptz NOT NULL,
    first_attempt_at timestamptz,
    next_attempt_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_events_due_idx ON webhook_events (next_attempt_at, id) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_events_sale_idx ON webhook_events (sale_id)`
  yield* sql`CREATE INDEX webhook_events_account_pending_idx ON webhook_events (account_id) WHERE status = 'pending'`
})

import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CatalogGroup } from "./CatalogApi.js"
import * as P from "./Problem.js"
import * as S from "./Schemas.js"
import { Authentication, OptionalAuthentication } from "./Security.js"

/**
 * The management and public API. Every endpoint of the contract except the paid checkout itself, which
 * answers raw x402 responses beside this API.
 */
export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("requestMagicLink", "/auth/magic-link")
      .setPayload(S.MagicLinkRequest)
      .addSuccess(S.MagicLinkSent, { status: 202 })
      .addError(P.InvalidInput)
      .addError(P.RateLimited)
      .addError(P.MailUnavailable)
      .annotate(OpenApi.Summary, "Email a sign-in link")
      .annotate(OpenApi.Description, "Answers 202 for any well-formed email, whether or not an account exists. Links are single use and valid for 15 minutes. Limits: 20 requests per client address per hour (429 with Retry-After); at most 5 links are mailed per email per 15 minutes, whoever asks: past that the answer is still 202 and the links already mailed keep working.")
  )
  .add(
    HttpApiEndpoint.post("verify", "/auth/verify")
      .setPayload(S.VerifyRequest)
      .addSuccess(S.SessionResponse)
      .addError(P.InvalidInput)
      .addError(P.Unauthenticated)
      .annotate(OpenApi.Summary, "Exchange a sign-in token for a session")
      .annotate(OpenApi.Description, "The first verify of an email creates its account. Sessions are valid for 30 days.")
  )
{}

export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("createKey", "/my/keys")
      .addSuccess(S.CreatedKey, { status: 201 })
      .addError(P.Forbidden)
      .annotate(OpenApi.Summary, "Create an API key (session only)")
      .annotate(OpenApi.Description, "The key is returned once; only its hash is stored. A key cannot create keys.")
  )
  .add(HttpApiEndpoint.get("listKeys", "/my/keys").addSuccess(S.KeyList).annotate(OpenApi.Summary, "List active API keys"))
  .add(
    HttpApiEndpoint.del("revokeKey", "/my/keys/:id")
      .setPath(S.KeyPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(P.NotFound)
      .annotate(OpenApi.Summary, "Revoke an API key immediately")
  )
  .middleware(Authentication)
{}

export class AccountGroup extends HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("getAccount", "/my/account").addSuccess(S.AccountView).annotate(OpenApi.Summary, "The account's settings"))
  .add(
    HttpApiEndpoint.patch("patchAccount", "/my/account")
      .setPayload(S.AccountPatchRequest)
      .addSuccess(S.AccountPatchResponse)
      .addError(P.InvalidInput)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "Change account settings (each field three-state)")
      .annotate(OpenApi.Description, "Absent keeps, a non-empty string replaces, \"\" clears. Setting webhook_url returns a new webhook_secret once. Adding a wallet rebuilds the checkouts of listings lacking that chain; listings that could not be rebuilt are reported in listings_skipped.")
  )
  .add(HttpApiEndpoint.get("stores", "/my/stores").addSuccess(S.Stores).annotate(OpenApi.Summary, "The account's inventory (legacy key `stores`)"))
  .middleware(Authentication)
{}

export class SalesGroup extends HttpApiGroup.make("sales")
  .add(
    HttpApiEndpoint.get("listSales", "/my/sales")
      .setUrlParams(S.SalesQuery)
      .addSuccess(S.SalesPage)
      .addError(P.InvalidInput)
      .annotate(OpenApi.Summary, "The sales ledger: settled sales, newest first, with webhook status and totals per chain")
      .annotate(OpenApi.Description, "Cursor pagination (`next_cursor`), `livemode=true|false` to show live or test sales only, `limit` 1-100 (default 25).")
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/my/sales/:id/redeliver")
      .setPath(S.SalePath)
      .addSuccess(S.Redelivery, { status: 202 })
      .addError(P.NotFound)
      .annotate(OpenApi.Summary, "Send a sale's sale.settled event again (fresh timestamp, fresh retry window)")
  )
  .middleware(Authentication)
{}

export class ListingsGroup extends HttpApiGroup.make("listings")
  .add(
    HttpApiEndpoint.patch("updateListing", "/repos/:owner/:repo")
      .setPath(S.RepoPath)
      .setPayload(S.UpdateListingRequest)
      .addSuccess(S.ListingView)
      .addError(P.InvalidInput)
      .addError(P.Forbidden)
      .addError(P.NotFound)
      .addError(P.HostRefused)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "Change a listing; the old checkout is voided")
  )
  .add(
    HttpApiEndpoint.del("takedown", "/repos/:owner/:repo")
      .setPath(S.RepoPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(P.Forbidden)
      .addError(P.NotFound)
      .annotate(OpenApi.Summary, "Take a listing down; its checkout is voided and its token destroyed")
  )
  .middleware(Authentication)
{}

export class ListingCreateGroup extends HttpApiGroup.make("listingCreate")
  .add(
    HttpApiEndpoint.post("createListing", "/repos")
      .setPayload(S.CreateListingRequest)
      .addSuccess(S.CreatedListing, { status: 201 })
      .addError(P.InvalidInput)
      .addError(P.AlreadyListed)
      .addError(P.HostRefused)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "List a repository (anonymously, or with a credential for account defaults)")
      .annotate(OpenApi.Description, "Anonymous listings get no wallet fallback and are limited to 30 an hour per client address.")
  )
  .middleware(OptionalAuthentication)
{}

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("ownerPage", "/r/:owner")
      .setPath(S.OwnerPath)
      .addSuccess(S.OwnerPage)
      .addError(P.NotFound)
      .addError(P.HostUnavailable)
      .addError(P.RateLimited)
      .annotate(OpenApi.Summary, "An owner's storefront")
      .annotate(OpenApi.Description, "JSON unless the Accept header prefers text/html: then the same page as HTML for browsers. Public pages (/r/...) are limited to 120 a minute per client address (429 with Retry-After).")
  )
  .add(
    HttpApiEndpoint.get("repoPage", "/r/:owner/:repo")
      .setPath(S.RepoPath)
      .addSuccess(S.RepoPage)
      .addError(P.NotFound)
      .addError(P.HostUnavailable)
      .addError(P.RateLimited)
      .annotate(OpenApi.Summary, "A listing's free preview: tree, README, price and checkout")
      .annotate(OpenApi.Description, "JSON unless the Accept header prefers text/html: then the same page as HTML for browsers. Public pages (/r/...) are limited to 120 a minute per client address (429 with Retry-After).")
  )
{}

/** The goods: a gzipped tar of the pinned commit (or, for the test twin, a manifest and a note). */
const Goods = HttpApiSchema.Uint8Array({ contentType: "application/gzip" })

/**
 * The 402 answer, documented: the v1 object is the body; the same requirements go base64-encoded in the
 * `PAYMENT-REQUIRED` header for x402 v2 clients.
 */
const PaymentRequired = Schema.Struct({
  x402Version: Schema.Literal(1),
  error: Schema.String,
  accepts: Schema.Array(Schema.Struct({
    scheme: Schema.Literal("exact"),
    network: Schema.String,
    maxAmountRequired: Schema.String,
    resource: Schema.String,
    description: Schema.String,
    mimeType: Schema.String,
    payTo: Schema.String,
    maxTimeoutSeconds: Schema.Int,
    asset: Schema.String,
    extra: Schema.Record({ key: Schema.String, value: Schema.String })
  }))
}).annotations({ identifier: "PaymentRequired", ...HttpApiSchema.annotations({ status: 402 }) })

const checkoutEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.get(name, path)
    .setPath(S.CheckoutPath)
    .setUrlParams(S.CheckoutQuery)
    .addSuccess(Goods)
    .addError(PaymentRequired)
    .addError(P.InvalidInput)
    .addError(P.NotFound)
    .addError(P.NotSelling)
    .addError(P.CheckoutGone)
    .addError(P.PaymentIdConflict)
    .addError(P.RateLimited)
    .addError(P.PaymentsUnavailable)
    .addError(P.SettlementPending)
    .addError(P.HostUnavailable)
    .addError(P.GoodsUnavailable)
    .addError(P.UpdateRefused)
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, "Without a payment header: 402 with the requirements (PAYMENT-REQUIRED header for x402 v2, JSON body for v1; v2 declares the optional payment-identifier extension, Sign-In-With-X and the x402 bazaar discovery extension: GET, no input, application/gzip). With PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1): check the signature and terms, verify, pin the commit, record the sale, settle, then stream the archive with PAYMENT-RESPONSE / X-PAYMENT-RESPONSE and a Link rel=\"receipt\" that re-downloads it for 7 days. A payment presented again never settles twice and never unlocks the goods by itself (402 payment_already_used): the buyer recovers with the receipt link, or with the payment-identifier id it sent (the same id with a payment signed by the same payer for the same terms gets the same goods, even after a reprice or takedown; the same id with another payment is 409 payment_id_conflict). Payment attempts are limited to 60 a minute per client address (429). When the code host cannot deliver the archive after the payment settled, the answer is 503 goods_unavailable with Retry-After, PAYMENT-RESPONSE and the receipt link (Link rel=\"receipt\" and the body's `receipt`): the sale stays settled and the goods are owed, not lost. With `?updates=latest`, a re-download by wallet proof or by the buyer's id gets the listing's current commit within the purchase's update window (403 updates_not_included / updates_window_closed / listing_taken_down otherwise).")

/** A download by receipt link: the archive, or the problems every such download can meet. */
const downloadEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.get(name, path)
    .setPath(S.DownloadPath)
    .addSuccess(Goods)
    .addError(P.NotFound)
    .addError(P.RateLimited)
    .addError(P.HostUnavailable)
    .addError(P.GoodsUnavailable)

/** A recent Solana mainnet blockhash, for a browser that may not ask an RPC endpoint itself. */
const SolanaBlockhash = Schema.Struct({
  blockhash: Schema.String,
  last_valid_block_height: Schema.Int
}).annotations({ identifier: "SolanaBlockhash" })

export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(checkoutEndpoint("checkout", "/checkout/:id", "Pay for a repository over x402 (USDC on Base or Solana)"))
  .add(checkoutEndpoint("testCheckout", "/checkout/:id/test", "The same checkout on test networks with simulated money"))
  .add(
    HttpApiEndpoint.get("solanaBlockhash", "/checkout/solana/blockhash")
      .addSuccess(SolanaBlockhash)
      .addError(P.RateLimited)
      .addError(P.PaymentsUnavailable)
      .annotate(OpenApi.Summary, "A recent Solana mainnet blockhash for building a live checkout payment")
      .annotate(OpenApi.Description, "The live checkout's Solana requirement names no recent blockhash, and the checkout page may talk to no origin but this one (connect-src 'self'): it asks here, and the server asks its Solana RPC endpoint (SOLANA_RPC_URL, commitment confirmed). Not cached (Cache-Control: no-store). 503 payments_unavailable when SOLANA_RPC_URL is off or the endpoint does not answer in time; limited to 30 a minute per client address (429).")
  )
  .add(
    downloadEndpoint("download", "/downloads/:token")
      .addError(P.ReceiptExpired)
      .annotate(OpenApi.Summary, "Download a paid repository again (7 days after payment)")
      .annotate(OpenApi.Description, "The archive of the commit paid for, kept on the server after its first download. Limited to 10 downloads per receipt and 30 per client address an hour, and 2 at once per receipt (429 with Retry-After); the purchase itself is never counted. 503 goods_unavailable (with the receipt link again and Retry-After) when the code host cannot deliver it right now.")
  )
  .add(
    downloadEndpoint("downloadLatest", "/downloads/:token/latest")
      .addError(P.UpdateRefused)
      .annotate(OpenApi.Summary, "The listing's current commit, within the purchase's update window")
      .annotate(OpenApi.Description, "By any receipt link of a purchase (the purchase's own or an update's, expired or not): when the listing was sold with an update window (`updates_days`) and it is still open, the archive of the head of the listing's default branch, without paying again. A newer commit is a new delivery recorded on the ledger (one per commit), with its own receipt link (Link rel=\"receipt\", 7 days), signed receipt (X-Receipt, naming the update's `delivery` id and commit) and provenance (`<receipt link>/provenance`); the same commit as the purchase answers the purchase's own goods. 403 with code updates_not_included, updates_window_closed or listing_taken_down otherwise: the purchased commit stays downloadable by its receipt link (the problem's `receipt`). Counted with the purchase's re-downloads (429).")
  )
{}

/**
 * The repomarket HttpApi: every group of the management and public API, for serving, deriving a client or
 * generating OpenAPI.
 */
export class Api extends HttpApi.make("repomarket")
  .add(AuthGroup)
  .add(KeysGroup)
  .add(AccountGroup)
  .add(ListingCreateGroup)
  .add(ListingsGroup)
  .add(SalesGroup)
  .add(PagesGroup)
  .add(CatalogGroup)
  .add(CheckoutGroup)
  .addError(P.InvalidInput)
  .annotate(OpenApi.Title, "repomarket")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(OpenApi.Description, "Sell code repositories over x402. Errors are RFC 9457 problem+json.")
{}

export { HttpApiSchema }

/**
 * repomarket's core, the part an embedder builds on: the model (data and rules), the ports it is written against
 * (`Context.Tag`s with their data and errors), the use cases with {@link UseCasesLive} that wires them, and the
 * offline check of a signed receipt ({@link verifyReceipt}). Imports only `effect` (and the receipt check, Web
 * Crypto), so it bundles for a browser or an edge runtime. Exported by name, chosen on purpose: helpers the
 * use cases and adapters share (id minting, AAD bindings, base62, patch plumbing, error mapping) stay inside.
 * Adapters (`repomarket/adapters/<family>`), the HTTP application (`repomarket/http`), the Lambda handlers
 * (`repomarket/lambda`), the testing kit (`repomarket/testing`) and the webhook receiver's check
 * (`repomarket/webhooks`) are separate entry points.
 *
 * @packageDocumentation
 */

// The model: data and the rules over it (pure).
export { Account } from "./domain/Account.js"
export {
  CATEGORIES,
  type Category,
  CATALOG_SORTS,
  type CatalogSort,
  type CatalogPosition,
  type CatalogQuery,
  type CatalogFacts,
  type CatalogEntry,
  type CatalogPage,
  type CategoryCount,
  positionOf
} from "./domain/Catalog.js"
export {
  Checkout,
  buildCheckout,
  voidCheckout,
  checkoutPath,
  testCheckoutPath,
  repoPagePath
} from "./domain/Checkout.js"
export { MAGIC_LINK_TTL_MS, SESSION_TTL_MS, MagicLinkToken, Session, ApiKey, Principal } from "./domain/Credentials.js"
export {
  FieldProblem,
  InvalidInput,
  Unauthenticated,
  Forbidden,
  NotFound,
  AlreadyListed,
  CheckoutGone,
  NotSelling,
  PaymentRejected,
  PaymentIdConflict,
  SettlementFailed,
  ReceiptExpired,
  UpdateRefusal,
  UpdateRefused,
  HostRefusal,
  HostRefused,
  RateLimited,
  HostUnavailable,
  GoodsUnavailable,
  PaymentsUnavailable,
  SettlementPending,
  MailUnavailable,
  NotConfigured,
  NotImplemented,
  WalletProofRefused,
  SearchUnavailable
} from "./domain/Errors.js"
export {
  AccountId,
  ListingId,
  CheckoutId,
  ApiKeyId,
  SessionId,
  SaleId,
  DeliveryId,
  EventId,
  IdPrefix,
  RepoRef,
  repoKey,
  TokenDigest,
  SealedSecret
} from "./domain/Ids.js"
export { ListingStatus, Listing } from "./domain/Listing.js"
export {
  AtomicAmount,
  USDC_DECIMALS,
  PRICE_PATTERN,
  MIN_PRICE,
  MAX_PRICE,
  type PriceProblem,
  priceProblemMessage,
  parsePriceUsd,
  formatUsd
} from "./domain/Money.js"
export {
  OFFER_RECEIPT_VERSION,
  type ArchiveDigest,
  type Pin,
  type OfferClaims,
  type ReceiptClaims,
  isArchiveDigest,
  receiptClaimsProblem,
  echoedCommit,
  echoedUpdatesDays,
  offerClaimsOf,
  receiptClaimsOf,
  updatesUntil,
  didWebOf,
  type DeliveredUpdate
} from "./domain/ReceiptClaims.js"
export { SaleStatus, Sale } from "./domain/Sale.js"
export { Delivery } from "./domain/Delivery.js"
export { Chain, CHAINS, walletField, Address, Wallets, noWallets, chainsOf, type ChainFacts } from "./domain/Wallet.js"
export {
  DeliveryStatus,
  DELIVERY_WINDOW_MS,
  ATTEMPT_TIMEOUT_MS,
  WebhookEvent,
  latestEvent
} from "./domain/WebhookEvent.js"
export { API_KEY_PREFIX, formatApiKey, isWellFormedApiKey, apiKeyLast4 } from "./domain/rules/ApiKeyFormat.js"
export {
  type CatalogParams,
  CATALOG_PARAMS,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  encodeCursor,
  decodeCursor,
  parseCatalogQuery
} from "./domain/rules/CatalogQuery.js"
export { categorize } from "./domain/rules/Category.js"
export { nextAttemptAt, isDelivered } from "./domain/rules/DeliveryPolicy.js"
export { normalizeEmail } from "./domain/rules/Email.js"
export { FieldErrors, pricePatch, walletPatches } from "./domain/rules/Fields.js"
export { type ParsedHostUrl, parseHostUrl, isPlausibleOwner, isPlausibleRepoName } from "./domain/rules/HostUrl.js"
export { SkipReason, SkippedListing, skipReason } from "./domain/rules/ListingsSkipped.js"
export { type ListingAccess, provesControl, accessTo } from "./domain/rules/Ownership.js"
export { type WalletPatches, resolvePayTo } from "./domain/rules/PayoutResolution.js"
export { RECEIPT_TTL_MS, receiptToken, parseReceipt, receiptExpired } from "./domain/rules/Receipt.js"
export { MAX_TIMEOUT_SECONDS, requirementsOf, matchesTerms, matchRequirement } from "./domain/rules/Requirements.js"
export { saleSettledBody } from "./domain/rules/SaleEvent.js"
export { README_TEXT_LIMIT, nameSearchText, readmeSearchText, topicsSearchText } from "./domain/rules/SearchText.js"
export { chainNames, isSelling, sellingNote } from "./domain/rules/Selling.js"
export { SIWX_CHALLENGE_TTL_MS, mintSiwxNonce, openSiwxNonce } from "./domain/rules/SiwxNonce.js"
export { TAGLINE_MAX_CODE_POINTS, validateTagline } from "./domain/rules/Tagline.js"
export { takeDown } from "./domain/rules/Takedown.js"
export { testGoodsFiles } from "./domain/rules/TestGoods.js"
export { Patch, fromField } from "./domain/rules/ThreeState.js"
export { WEBHOOK_URL_MAX_LENGTH, validateWebhookUrl } from "./domain/rules/WebhookUrl.js"

// The ports: what the use cases need from the world.
export { AccountStore } from "./ports/AccountStore.js"
export {
  InvalidAddress,
  Chains,
  type RecentBlockhash,
  ChainUnreachable,
  type PaymentTerms,
  PaymentRefused,
  type PaymentIdentity,
  InvalidPayment
} from "./ports/Chains.js"
export {
  type RepoTree,
  type TreeEntry,
  type RepoInfo,
  type Readme,
  type OwnerRepo,
  type CodeHostFailure,
  type CutPurpose,
  CodeHostError,
  CodeHost,
  wholeArchive,
  wholeArchiveBytes
} from "./ports/CodeHost.js"
export {
  type CodeHostIdentityFailure,
  CodeHostIdentityError,
  type HostProof,
  CodeHostIdentity,
  identityNotConfigured
} from "./ports/CodeHostIdentity.js"
export { CredentialStore } from "./ports/CredentialStore.js"
export { ListingCatalog } from "./ports/ListingCatalog.js"
export { LiveListingExists, type CheckoutWithListing, type SellingRepo, ListingStore } from "./ports/ListingStore.js"
export { type Mail, MailError, type MailDelivery, Mailer } from "./ports/Mailer.js"
export { Outbox } from "./ports/Outbox.js"
export { type PackagedFile, Packager } from "./ports/Packager.js"
export {
  type PaymentRequirement,
  type SubmittedPayment,
  type Verification,
  type Settlement,
  type SettlementStatus,
  FacilitatorError,
  type Facilitator,
  PaymentFacilitator
} from "./ports/PaymentFacilitator.js"
export { PublicOrigin } from "./ports/PublicOrigin.js"
export { LimitExceeded, RateLimiter } from "./ports/RateLimiter.js"
export { type PublicKeyJwk, ReceiptSigner } from "./ports/ReceiptSigner.js"
export { type DeliveredArchive, type SaleTotal, type SalePage, type SettledByPayer, SaleLedger } from "./ports/SaleLedger.js"
export { SecretBoxError, SecretBox } from "./ports/SecretBox.js"
export { SingleUse } from "./ports/SingleUse.js"
export { isStorageError, StorageError } from "./ports/StorageError.js"
export { Transactor } from "./ports/Transactor.js"
export { type WalletProofExpectation, type ProvenWallet, WalletProofError, WalletProof } from "./ports/WalletProof.js"
export { WebhookSendError, WebhookSender } from "./ports/WebhookSender.js"

// The use cases, and the layer that wires them over whatever ports a host provides.
export { type AccountPatchInput, type AccountPatchResult, Accounts } from "./domain/usecases/Accounts.js"
export { LIMITS, type IssuedSession, Auth } from "./domain/usecases/Auth.js"
export { type CatalogResult, type Home, HOME_NEWEST, Catalog } from "./domain/usecases/Catalog.js"
export { MAX_PAGE, DEFAULT_PAGE, type LedgerRow, type LedgerPage, Dashboard } from "./domain/usecases/Dashboard.js"
export {
  HOST_CONNECTION_TTL_MS,
  type CallbackInput,
  type PendingConnection,
  HostConnection
} from "./domain/usecases/HostConnection.js"
export {
  type CreateListingInput,
  type UpdateListingInput,
  ANONYMOUS_LISTINGS_PER_HOUR,
  Listings
} from "./domain/usecases/Listings.js"
export { type Goods, type Quote, PAYMENT_ATTEMPTS_PER_MINUTE, Purchases } from "./domain/usecases/Purchases.js"
export { type ReconcileOptions, type ReconcileSummary, Reconciler } from "./domain/usecases/Reconciler.js"
export {
  SIWX_HEADER,
  type SiwxChallenge,
  SIWX_STATEMENT,
  REDOWNLOADS_PER_RECEIPT_PER_HOUR,
  REDOWNLOADS_PER_CLIENT_PER_HOUR,
  CONCURRENT_DOWNLOADS_PER_RECEIPT,
  CONCURRENT_RETRY_AFTER_SECONDS,
  Redownloads
} from "./domain/usecases/Redownloads.js"
export { SETTLE_BY_MARGIN_MS, Settlements } from "./domain/usecases/Settlements.js"
export { type SitemapPage, URLS_PER_SITEMAP, sitemapPages, Sitemap } from "./domain/usecases/Sitemap.js"
export {
  type IndexedRepo,
  type OwnerPage,
  INDEX_SKIPPED,
  INDEX_UNAVAILABLE,
  type RepoPage,
  Storefront
} from "./domain/usecases/Storefront.js"
export { Webhooks } from "./domain/usecases/Webhooks.js"
export { UseCasesLive } from "./domain/usecases/UseCases.js"

// Protocol checks that run anywhere.
export {
  type PurchaseMode,
  type ReceiptKey,
  type ReceiptVerification,
  TEST_PURCHASE,
  type VerifyOptions,
  verifyReceipt
} from "./codec/VerifyReceipt.js"
export { type ProvenanceVerification, verifyProvenance } from "./codec/VerifyProvenance.js"
export {
  type Attestor,
  DELIVERY_PREDICATE_TYPE,
  type DeliveryStatement,
  type DsseEnvelope,
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  pae
} from "./domain/Provenance.js"

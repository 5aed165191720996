import { Schema } from "effect"

/**
 * Every failure a use case can report, free of HTTP. The host attaches a status to each where the endpoint
 * is declared and renders it as problem+json. Messages never contain a secret.
 */

/** One invalid field and what is wrong with it, as listed in an `InvalidInput`. */
export class FieldProblem extends Schema.Class<FieldProblem>("FieldProblem")({
  field: Schema.String,
  message: Schema.String
}) {}

/** Malformed or invalid input (400). */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  detail: Schema.String,
  errors: Schema.Array(FieldProblem)
}) {
  /** The error for a single invalid field. */
  static forField(field: string, message: string): InvalidInput {
    return InvalidInput.forFields([new FieldProblem({ field, message })])
  }
  /** The error for several invalid fields; its `detail` names the field when there is only one. */
  static forFields(errors: ReadonlyArray<FieldProblem>): InvalidInput {
    const detail = errors.length === 1 ? `${errors[0]!.field} ${errors[0]!.message}` : "Several fields are invalid."
    return new InvalidInput({ detail, errors })
  }
}

/** Missing, unknown, expired or revoked credential (401). */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  detail: Schema.String
}) {}

/** A valid credential that may not do this (403). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  detail: Schema.String
}) {}

/** Unknown listing, owner page or resource (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  detail: Schema.String
}) {}

/** The repo is already listed by another party (409). */
export class AlreadyListed extends Schema.TaggedError<AlreadyListed>()("AlreadyListed", {
  repo: Schema.String,
  detail: Schema.String
}) {}

/** A voided or taken-down checkout (410); `page` is where the buyer can find the current one. */
export class CheckoutGone extends Schema.TaggedError<CheckoutGone>()("CheckoutGone", {
  page: Schema.String,
  detail: Schema.String
}) {}

/** The listing behind a checkout has no price or no payout address right now (409). */
export class NotSelling extends Schema.TaggedError<NotSelling>()("NotSelling", {
  page: Schema.String,
  detail: Schema.String
}) {}

/** A payment that does not match the current requirements or failed verification (402); nothing was recorded. */
export class PaymentRejected extends Schema.TaggedError<PaymentRejected>()("PaymentRejected", {
  reason: Schema.String,
  detail: Schema.String
}) {}

/**
 * A payment carries an x402 `payment-identifier` id that names another purchase of the same payer, but the
 * payment is not that purchase's (other terms, another checkout, or not signed by the payer) (409).
 */
export class PaymentIdConflict extends Schema.TaggedError<PaymentIdConflict>()("PaymentIdConflict", {
  detail: Schema.String
}) {}

/** Settlement failed: the sale is recorded as failed and no byte was sent (402). */
export class SettlementFailed extends Schema.TaggedError<SettlementFailed>()("SettlementFailed", {
  reason: Schema.String,
  network: Schema.String,
  payer: Schema.String,
  detail: Schema.String
}) {}

/** A download receipt that is unknown, forged or past its 7 days (410 when expired, 404 when unknown). */
export class ReceiptExpired extends Schema.TaggedError<ReceiptExpired>()("ReceiptExpired", {
  page: Schema.String,
  detail: Schema.String
}) {}

/** Why a buyer's request for the listing's current commit was refused (`UpdateRefused`). */
export const UpdateRefusal = Schema.Literal("updates_not_included", "updates_window_closed", "listing_taken_down")
/** One of `UpdateRefusal`'s reasons. */
export type UpdateRefusal = typeof UpdateRefusal.Type

/**
 * A request for the listing's current commit after a purchase, refused (403): the purchase came with no
 * updates, its window has closed, or the listing was taken down. The buyer keeps what it bought: `receipt` is
 * the purchased commit's own download link.
 */
export class UpdateRefused extends Schema.TaggedError<UpdateRefused>()("UpdateRefused", {
  reason: UpdateRefusal,
  receipt: Schema.String,
  detail: Schema.String
}) {}

/** Why the code host refused a listing. */
export const HostRefusal = Schema.Literal("repo_not_found", "private_repo_needs_token", "token_rejected", "token_lacks_access")
/** One of `HostRefusal`'s reasons. */
export type HostRefusal = typeof HostRefusal.Type

/** The code host refused what was given (422): missing repo, private without token, token without access. */
export class HostRefused extends Schema.TaggedError<HostRefused>()("HostRefused", {
  reason: HostRefusal,
  detail: Schema.String
}) {}

/** Too many requests (429). */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Int,
  detail: Schema.String
}) {}

/** The code host failed or rate-limited us (503, with a retry hint when known). */
export class HostUnavailable extends Schema.TaggedError<HostUnavailable>()("HostUnavailable", {
  retryAfterSeconds: Schema.NullOr(Schema.Int),
  detail: Schema.String
}) {}

/**
 * A settled sale whose goods cannot be delivered right now: the code host failed when its archive was fetched,
 * after the payment settled (503). The sale stays settled; `receipt` delivers the goods once the host is back.
 */
export class GoodsUnavailable extends Schema.TaggedError<GoodsUnavailable>()("GoodsUnavailable", {
  receipt: Schema.String,
  retryAfterSeconds: Schema.Int,
  detail: Schema.String
}) {}

/** The payment facilitator is missing or failed (503). */
export class PaymentsUnavailable extends Schema.TaggedError<PaymentsUnavailable>()("PaymentsUnavailable", {
  detail: Schema.String
}) {}

/**
 * A settle call whose outcome is not known (it timed out, the facilitator failed with a 5xx, the connection
 * was lost): money may have moved. The sale stays pending until the chain or a retry tells (503).
 */
export class SettlementPending extends Schema.TaggedError<SettlementPending>()("SettlementPending", {
  retryAfterSeconds: Schema.Int,
  detail: Schema.String
}) {}

/** Outgoing mail failed, so a sign-in link could not be sent (503). */
export class MailUnavailable extends Schema.TaggedError<MailUnavailable>()("MailUnavailable", {
  detail: Schema.String
}) {}

/** A feature the operator has not configured, e.g. the code-host connection without an OAuth app (503). */
export class NotConfigured extends Schema.TaggedError<NotConfigured>()("NotConfigured", {
  detail: Schema.String
}) {}

/** Not built yet in this release (501). */
export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", {
  detail: Schema.String
}) {}

/**
 * A Sign-In-With-X proof that unlocks nothing: bad, expired, replayed, not ours, or a wallet without a settled
 * purchase. `reason` is the x402 SIWX code (`invalid_siwx_*`) or `siwx_no_purchase`. Answered the x402 way, with
 * a fresh challenge to sign or pay (402).
 */
export class WalletProofRefused extends Schema.TaggedError<WalletProofRefused>()("WalletProofRefused", {
  reason: Schema.String,
  detail: Schema.String
}) {}

/**
 * A catalog search that could not be answered within the bounds of a public read (503, with a retry hint):
 * `search_too_broad` when it needed more database time than one may take (`CATALOG_STATEMENT_TIMEOUT_MS`),
 * `search_busy` when every slot for searches stayed taken (`CATALOG_CONCURRENCY`).
 */
export class SearchUnavailable extends Schema.TaggedError<SearchUnavailable>()("SearchUnavailable", {
  reason: Schema.Literal("search_too_broad", "search_busy"),
  retryAfterSeconds: Schema.Int,
  detail: Schema.String
}) {}

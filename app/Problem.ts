import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import * as E from "../domain/Errors.js"

/** RFC 9457 problem details, with a stable machine `code` and per-field `errors`. */
export const ProblemJson = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  code: Schema.String,
  errors: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))),
  /** Where to go instead (a voided checkout points to the repo page). */
  page: Schema.optional(Schema.String),
  /** Mirrors the `Retry-After` header of a 429 or 503. */
  retry_after_seconds: Schema.optional(Schema.Int),
  reason: Schema.optional(Schema.String),
  repo: Schema.optional(Schema.String),
  /** A paid purchase's receipt link, when its goods are owed (`goods_unavailable`); also in `Link: <…>; rel="receipt"`. */
  receipt: Schema.optional(Schema.String)
}).annotations({ identifier: "Problem" })
export type ProblemJson = typeof ProblemJson.Type

export const PROBLEM_CONTENT_TYPE = "application/problem+json"
export const problemType = (code: string) => `https://repomarket.dev/problems/${code.replace(/_/g, "-")}`

export const problemBody = (
  status: number,
  code: string,
  title: string,
  detail: string,
  extra: Partial<ProblemJson> = {}
): ProblemJson => ({ type: problemType(code), title, status, detail, code, ...extra })

/**
 * The HTTP face of a domain error: encodes it as problem+json with its status. Decoding (for typed
 * clients and tests) rebuilds the domain error from the problem.
 */
const asProblem = <A extends { readonly detail: string }, I>(
  error: Schema.Schema<A, I>,
  options: {
    readonly status: number
    readonly code: (e: A) => string
    readonly title: string
    readonly extra?: (e: A) => Partial<ProblemJson>
    readonly fromProblem: (p: ProblemJson) => A
  }
) =>
  Schema.transform(ProblemJson, Schema.typeSchema(error), {
    strict: true,
    decode: (p) => options.fromProblem(p),
    encode: (e) => problemBody(options.status, options.code(e), options.title, e.detail, options.extra?.(e) ?? {})
  }).annotations({
    ...HttpApiSchema.annotations({ status: options.status, description: options.title }),
    [HttpApiSchema.AnnotationEncoding]: { kind: "Json", contentType: PROBLEM_CONTENT_TYPE }
  })

export const InvalidInput = asProblem(E.InvalidInput, {
  status: 400,
  code: () => "invalid_request",
  title: "The request is invalid",
  extra: (e) => ({ errors: e.errors.map((f) => ({ field: f.field, message: f.message })) }),
  fromProblem: (p) =>
    new E.InvalidInput({ detail: p.detail, errors: (p.errors ?? []).map((f) => new E.FieldProblem(f)) })
})
export const Unauthenticated = asProblem(E.Unauthenticated, {
  status: 401,
  code: () => "unauthenticated",
  title: "Authentication required",
  fromProblem: (p) => new E.Unauthenticated({ detail: p.detail })
})
export const Forbidden = asProblem(E.Forbidden, {
  status: 403,
  code: () => "forbidden",
  title: "Not allowed",
  fromProblem: (p) => new E.Forbidden({ detail: p.detail })
})
export const NotFound = asProblem(E.NotFound, {
  status: 404,
  code: () => "not_found",
  title: "Not found",
  fromProblem: (p) => new E.NotFound({ detail: p.detail })
})
export const AlreadyListed = asProblem(E.AlreadyListed, {
  status: 409,
  code: () => "already_listed",
  title: "Already listed by another party",
  extra: (e) => ({ repo: e.repo }),
  fromProblem: (p) => new E.AlreadyListed({ detail: p.detail, repo: p.repo ?? "" })
})
export const CheckoutGone = asProblem(E.CheckoutGone, {
  status: 410,
  code: () => "checkout_gone",
  title: "This checkout is no longer valid",
  extra: (e) => ({ page: e.page }),
  fromProblem: (p) => new E.CheckoutGone({ detail: p.detail, page: p.page ?? "" })
})
export const HostRefused = asProblem(E.HostRefused, {
  status: 422,
  code: (e) => e.reason,
  title: "The code host refused",
  extra: (e) => ({ reason: e.reason }),
  fromProblem: (p) => new E.HostRefused({ detail: p.detail, reason: p.reason as E.HostRefusal })
})
export const RateLimited = asProblem(E.RateLimited, {
  status: 429,
  code: () => "rate_limited",
  title: "Too many requests",
  extra: (e) => ({ retry_after_seconds: e.retryAfterSeconds }),
  fromProblem: (p) => new E.RateLimited({ detail: p.detail, retryAfterSeconds: p.retry_after_seconds ?? 1 })
})
export const HostUnavailable = asProblem(E.HostUnavailable, {
  status: 503,
  code: () => "host_unavailable",
  title: "The code host is unavailable",
  extra: (e) => (e.retryAfterSeconds === null ? {} : { retry_after_seconds: e.retryAfterSeconds }),
  fromProblem: (p) => new E.HostUnavailable({ detail: p.detail, retryAfterSeconds: p.retry_after_seconds ?? null })
})
export const GoodsUnavailable = asProblem(E.GoodsUnavailable, {
  status: 503,
  code: () => "goods_unavailable",
  title: "Paid, but the goods cannot be delivered right now",
  extra: (e) => ({ receipt: e.receipt, retry_after_seconds: e.retryAfterSeconds }),
  fromProblem: (p) => new E.GoodsUnavailable({ detail: p.detail, receipt: p.receipt ?? "", retryAfterSeconds: p.retry_after_seconds ?? 30 })
})
export const PaymentsUnavailable = asProblem(E.PaymentsUnavailable, {
  status: 503,
  code: () => "payments_unavailable",
  title: "Payments are unavailable",
  fromProblem: (p) => new E.PaymentsUnavailable({ detail: p.detail })
})
export const SettlementPending = asProblem(E.SettlementPending, {
  status: 503,
  code: () => "settlement_pending",
  title: "The payment's settlement is not confirmed yet",
  extra: (e) => ({ retry_after_seconds: e.retryAfterSeconds }),
  fromProblem: (p) => new E.SettlementPending({ detail: p.detail, retryAfterSeconds: p.retry_after_seconds ?? 5 })
})
export const MailUnavailable = asProblem(E.MailUnavailable, {
  status: 503,
  code: () => "mail_unavailable",
  title: "Mail could not be sent",
  fromProblem: (p) => new E.MailUnavailable({ detail: p.detail })
})
export const NotConfigured = asProblem(E.NotConfigured, {
  status: 503,
  code: () => "not_configured",
  title: "Not configured on this server",
  fromProblem: (p) => new E.NotConfigured({ detail: p.detail })
})
export const NotImplemented = asProblem(E.NotImplemented, {
  status: 501,
  code: () => "not_implemented",
  title: "Not implemented yet",
  fromProblem: (p) => new E.NotImplemented({ detail: p.detail })
})

export const NotSelling = asProblem(E.NotSelling, {
  status: 409,
  code: () => "not_selling",
  title: "Not selling",
  extra: (e) => ({ page: e.page }),
  fromProblem: (p) => new E.NotSelling({ detail: p.detail, page: p.page ?? "" })
})
export const PaymentIdConflict = asProblem(E.PaymentIdConflict, {
  status: 409,
  code: () => "payment_id_conflict",
  title: "This payment-identifier id belongs to another payment",
  fromProblem: (p) => new E.PaymentIdConflict({ detail: p.detail })
})
export const ReceiptExpired = asProblem(E.ReceiptExpired, {
  status: 410,
  code: () => "receipt_expired",
  title: "This download link has expired",
  extra: (e) => ({ page: e.page }),
  fromProblem: (p) => new E.ReceiptExpired({ detail: p.detail, page: p.page ?? "" })
})
/** 403 whose code is the reason; `receipt` is the purchased commit's own link, which the refusal leaves as it was. */
export const UpdateRefused = asProblem(E.UpdateRefused, {
  status: 403,
  code: (e) => e.reason,
  title: "Newer commits are not part of this purchase",
  extra: (e) => ({ reason: e.reason, receipt: e.receipt }),
  fromProblem: (p) =>
    new E.UpdateRefused({
      detail: p.detail,
      reason: p.code === "updates_not_included" || p.code === "listing_taken_down" ? p.code : "updates_window_closed",
      receipt: p.receipt ?? ""
    })
})
export const SearchUnavailable = asProblem(E.SearchUnavailable, {
  status: 503,
  code: (e) => e.reason,
  title: "The search could not be answered",
  extra: (e) => ({ retry_after_seconds: e.retryAfterSeconds }),
  fromProblem: (p) =>
    new E.SearchUnavailable({
      detail: p.detail,
      reason: p.code === "search_busy" ? "search_busy" : "search_too_broad",
      retryAfterSeconds: p.retry_after_seconds ?? 1
    })
})

import { retry } from "@octokit/plugin-retry"
import { throttling } from "@octokit/plugin-throttling"
import { Octokit } from "@octokit/rest"
import { Clock, Effect, Option, Redacted } from "effect"
import { CodeHostError } from "../../ports/CodeHost.js"
import type { GithubEndpoints } from "./GithubConfig.js"
import { type Credential, type HostFailure, type Subject, toCodeHostError } from "./GithubErrors.js"
import { DEFAULT_QUOTA_RESERVE_SHARE, type QuotaMeter, type QuotaReading, readingOf } from "./Quota.js"

/** Internal limits of the GitHub adapter; tests shorten the waits. Documented in adapters/github/README.md. */
export interface GithubTuning {
  /** How long a cached answer is served without asking GitHub (then revalidated with If-None-Match). */
  readonly freshMs: number
  /**
   * How long GitHub's "no such owner" (404) is remembered: made-up names on public owner pages must not
   * each cost a request against the server's shared quota. Outages and rate limits are never remembered.
   */
  readonly missingFreshMs: number
  /** How many answers the cache holds at most. */
  readonly cacheMaxEntries: number
  /** Estimated bytes of cached answers. */
  readonly cacheMaxWeight: number
  /** File-tree entries kept; more sets `truncated`. */
  readonly maxTreeEntries: number
  /** Pages of 100 repos read for an owner's index. */
  readonly maxOwnerPages: number
  /** README bytes rendered; the rest is cut. */
  readonly maxReadmeBytes: number
  /** Retries of a failed request (network error, 5xx), with (n+1)² × retryBaseMs between them. */
  readonly retries: number
  /** The base of the wait between retries. */
  readonly retryBaseMs: number
  /** A secondary rate limit asking to wait at most this long is retried once; anything else fails fast. */
  readonly maxSecondaryWaitSeconds: number
  /** The unit of the wait a secondary rate limit asks for (1 s in production; tests shorten it). */
  readonly secondaryWaitUnitMs: number
  /** Whole budget of one call, retries included. */
  readonly requestTimeoutMs: number
  /** Redirects followed for an archive (GitHub sends one, to codeload). */
  readonly maxArchiveRedirects: number
  /** Archives of pinned commits at most this big are kept in memory after their first download (0: none). */
  readonly archiveCacheEntryBytes: number
  /** Bytes of archives kept in memory in all (least recently used dropped first). */
  readonly archiveCacheBytes: number
  /**
   * The share of the server credential's hourly GitHub quota that anonymous lookups (owner indexes) never
   * spend, kept for previews of listed repos, listing and purchases (see Quota.ts). `GITHUB_QUOTA_RESERVE_PERCENT`
   * overrides it.
   */
  readonly quotaReserveShare: number
  /** After a failed `GET /rate_limit` (no reading to be had), how long spare calls go without one. */
  readonly quotaProbeRetryMs: number
  /**
   * Bytes of purchased archives kept on disk under `<DATA_DIR>/archives` (least recently used dropped first;
   * 0: none). `ARCHIVE_CACHE_BYTES` overrides it.
   */
  readonly archiveDiskBytes: number
  /**
   * Bytes of archives cut for offers (unpaid requests) kept on disk under `<DATA_DIR>/archives-offers`, apart from
   * purchased ones (0: offers cut nothing; off too when `archiveDiskBytes` is 0). `ARCHIVE_OFFER_BYTES` overrides it.
   */
  readonly archiveOfferBytes: number
}

/** The production tuning of the GitHub client. */
export const DEFAULT_TUNING: GithubTuning = {
  freshMs: 10 * 60_000,
  missingFreshMs: 5 * 60_000,
  cacheMaxEntries: 2_000,
  cacheMaxWeight: 64 * 1024 * 1024,
  maxTreeEntries: 5_000,
  maxOwnerPages: 3,
  maxReadmeBytes: 512 * 1024,
  retries: 1,
  retryBaseMs: 1_000,
  maxSecondaryWaitSeconds: 3,
  secondaryWaitUnitMs: 1_000,
  requestTimeoutMs: 15_000,
  maxArchiveRedirects: 3,
  archiveCacheEntryBytes: 2 * 1024 * 1024,
  archiveCacheBytes: 32 * 1024 * 1024,
  quotaReserveShare: DEFAULT_QUOTA_RESERVE_SHARE,
  quotaProbeRetryMs: 60_000,
  archiveDiskBytes: 1024 * 1024 * 1024,
  archiveOfferBytes: 128 * 1024 * 1024
}

const GithubOctokit = Octokit.plugin(throttling, retry)

const API_VERSION = "2022-11-28"
export const USER_AGENT = "repomarket"

export type Answer =
  | { readonly _tag: "Ok"; readonly data: unknown; readonly etag: string | null; readonly headers: Readonly<Record<string, string | undefined>> }
  | { readonly _tag: "NotModified" }

export interface GetOptions {
  /** A listing's token; without one the server's GITHUB_TOKEN (if any) is used. */
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly what: Subject
  readonly accept?: string
  /** Sent as If-None-Match; a 304 comes back as `NotModified`. */
  readonly etag?: string | null
  /**
   * An anonymous lookup anybody can trigger (an owner's index): made only while the server credential's
   * quota stays above the reserve, else failed at once with `quota_reserved` and nothing is sent.
   */
  readonly spare?: boolean
}

const noop = () => undefined

interface RequestErrorLike {
  readonly status?: number
  readonly message?: string
  readonly response?: { readonly headers?: Record<string, string | undefined> }
}

/** An Octokit failure reduced to status and headers; no response (a network failure, a timeout) is status 0. */
const failureOf = (e: unknown): HostFailure => {
  const err = (typeof e === "object" && e !== null ? e : {}) as RequestErrorLike
  const response = err.response
  return {
    status: response === undefined ? 0 : (err.status ?? 0),
    headers: response?.headers ?? {},
    hostMessage: typeof err.message === "string" ? err.message : ""
  }
}

/** Why a request got no answer: the network's code (ECONNREFUSED, ENOTFOUND...), its short message, or the error's name. */
const noAnswerCause = (e: unknown): string => {
  const at = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)
  const cause = at(e, "cause")
  const code = at(at(cause, "cause"), "code") ?? at(cause, "code") ?? at(e, "code")
  if (typeof code === "string" && /^[A-Z_]{3,40}$/.test(code)) return code
  const inner = at(at(cause, "cause"), "message")
  const name = at(cause, "name") ?? at(e, "name")
  return typeof inner === "string" && inner !== "" && inner.length <= 80 ? inner : typeof name === "string" && name !== "" ? name : "no answer"
}

/**
 * The log line of a code-host outage (the request itself answers 503 host_unavailable): what GitHub did, at which
 * `GITHUB_API_URL`, and with which credential. Never a token, a path or GitHub's own text.
 */
const outageLine = (error: CodeHostError, failure: HostFailure, e: unknown, apiUrl: string, credential: Credential): string => {
  const who = credential === "server" ? "with GITHUB_TOKEN" : credential === "listing" ? "with a listing's token" : "anonymously"
  const what = failure.status === 0
    ? `did not answer (${noAnswerCause(e)})`
    : error.reason === "rate_limited"
    ? "is rate-limiting this server"
    : failure.status === 401 && credential === "server"
    ? "rejected GITHUB_TOKEN (expired, revoked or mistyped)"
    : `answered HTTP ${failure.status}`
  const hint = error.reason === "rate_limited" && credential === "none" ? "; GITHUB_TOKEN raises the limit" : ""
  return `Code host unavailable: GitHub at GITHUB_API_URL ${apiUrl} ${what}, asked ${who}${hint}`
}

/** The credential a request carries and the header that carries it. Tokens travel only in this header. */
export const authorizationFor = (
  token: Option.Option<Redacted.Redacted<string>>,
  serverToken: Option.Option<Redacted.Redacted<string>>
): { readonly credential: Credential; readonly header: Record<string, string> } => {
  if (Option.isSome(token)) return { credential: "listing", header: { authorization: `Bearer ${Redacted.value(token.value)}` } }
  if (Option.isSome(serverToken)) return { credential: "server", header: { authorization: `Bearer ${Redacted.value(serverToken.value)}` } }
  return { credential: "none", header: {} }
}

/** The `core` reading of a `GET /rate_limit` answer's body (`resources.core`, or the older `rate`). */
const readingOfBody = (data: unknown): QuotaReading | null => {
  const body = (typeof data === "object" && data !== null ? data : {}) as { resources?: { core?: unknown }; rate?: unknown }
  const core = (body.resources?.core ?? body.rate) as { limit?: unknown; remaining?: unknown; reset?: unknown } | undefined
  if (core === undefined || core === null) return null
  return readingOf({ "x-ratelimit-limit": String(core.limit), "x-ratelimit-remaining": String(core.remaining), "x-ratelimit-reset": String(core.reset) })
}

/**
 * GET requests to the GitHub REST API through Octokit with the throttling and retry plugins:
 * - primary rate limits fail at once with `rate_limited` (never wait out an hour inside a request);
 * - a secondary limit that asks for a few seconds at most is retried once;
 * - network failures and 5xx are retried `retries` times, 4xx never;
 * - every answer to the server credential feeds `quota` (GitHub's `x-ratelimit-*` headers), and a `spare`
 *   request is made only while that quota stays above the reserve (Quota.ts).
 */
export const makeGithubClient = (
  endpoints: GithubEndpoints,
  serverToken: Option.Option<Redacted.Redacted<string>>,
  tuning: GithubTuning,
  quota: QuotaMeter
) => {
  const octokit = new GithubOctokit({
    baseUrl: endpoints.apiUrl,
    userAgent: USER_AGENT,
    log: { debug: noop, info: noop, warn: noop, error: noop },
    throttle: {
      onRateLimit: () => false,
      onSecondaryRateLimit: (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) =>
        retryCount === 0 && retryAfter <= tuning.maxSecondaryWaitSeconds,
      retryAfterBaseValue: tuning.secondaryWaitUnitMs
    },
    retry: {
      retries: tuning.retries,
      retryAfterBaseValue: tuning.retryBaseMs,
      // 429 is a rate limit: the throttling plugin decides about it, the retry plugin must not.
      doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451]
    }
  })

  // One `GET /rate_limit` at a time: it does not count against the quota, and concurrent spare calls share it.
  let probing: Promise<void> | undefined
  const probe = Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
    Effect.promise(() =>
      probing ??= octokit.request("GET /rate_limit", {
        headers: { ...authorizationFor(Option.none(), serverToken).header, "x-github-api-version": API_VERSION },
        request: { signal: AbortSignal.timeout(tuning.requestTimeoutMs) }
      }).then(
        (res) => {
          const reading = readingOfBody(res.data) ?? readingOf(res.headers as Record<string, string | undefined>)
          if (reading === null) quota.probeFailed(startedAt, tuning.quotaProbeRetryMs)
          else quota.observe(reading)
        },
        () => quota.probeFailed(startedAt, tuning.quotaProbeRetryMs)
      ).finally(() => {
        probing = undefined
      })
    ))

  /** Lets a spare request go while the quota stays above the reserve; learns the quota first if unknown. */
  const admitSpare: Effect.Effect<void, CodeHostError> = Effect.gen(function*() {
    let verdict = quota.verdict(yield* Clock.currentTimeMillis)
    if (verdict._tag === "Unknown") {
      yield* probe
      verdict = quota.verdict(yield* Clock.currentTimeMillis)
    }
    if (verdict._tag === "Reserved") {
      return yield* new CodeHostError({
        reason: "quota_reserved",
        message: "The server keeps the rest of its code-host quota for previews and purchases until the hour resets.",
        retryAfterSeconds: verdict.retryAfterSeconds
      })
    }
  })

  const get = (route: string, params: Record<string, string | number>, options: GetOptions): Effect.Effect<Answer, CodeHostError> =>
    Effect.suspend(() => {
      const { credential, header } = authorizationFor(options.token, serverToken)
      const shared = credential !== "listing"
      if (options.spare === true && shared) return Effect.zipRight(admitSpare, send(route, params, options, credential, header, shared))
      return send(route, params, options, credential, header, shared)
    })

  const send = (
    route: string,
    params: Record<string, string | number>,
    options: GetOptions,
    credential: Credential,
    header: Record<string, string>,
    shared: boolean
  ): Effect.Effect<Answer, CodeHostError> =>
    Effect.suspend(() => {
      const headers: Record<string, string> = {
        ...header,
        accept: options.accept ?? "application/vnd.github+json",
        "x-github-api-version": API_VERSION,
        ...(options.etag ? { "if-none-match": options.etag } : {})
      }
      return Effect.acquireUseRelease(
        Effect.sync(() => (shared ? quota.sent() : () => undefined)),
        (answered) =>
          Effect.tryPromise({
            try: (signal) =>
              octokit.request(route, {
                ...params,
                headers,
                request: { signal: AbortSignal.any([signal, AbortSignal.timeout(tuning.requestTimeoutMs)]) }
              }),
            catch: (e) => e
          }).pipe(
            Effect.tap((res) => Effect.sync(() => shared && quota.observe(readingOf(res.headers as Record<string, string | undefined>)))),
            Effect.tapError((e) => Effect.sync(() => shared && quota.observe(readingOf(failureOf(e).headers))))
          ),
        (answered) => Effect.sync(answered)
      ).pipe(
        Effect.map((res): Answer => ({
          _tag: "Ok",
          data: res.data,
          etag: typeof res.headers.etag === "string" ? res.headers.etag : null,
          headers: res.headers as Record<string, string | undefined>
        })),
        Effect.catchAll((e) => {
          const failure = failureOf(e)
          if (failure.status === 304) return Effect.succeed<Answer>({ _tag: "NotModified" })
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const error = toCodeHostError(failure, credential, options.what, now)
            // The buyer or seller reads "503 host_unavailable"; the operator reads why, here.
            return error.reason === "unavailable" || error.reason === "rate_limited"
              ? Effect.zipRight(Effect.logWarning(outageLine(error, failure, e, endpoints.apiUrl, credential)), Effect.fail(error))
              : Effect.fail(error)
          })
        })
      )
    })

  return { get, admitSpare } as const
}

export type GithubClient = ReturnType<typeof makeGithubClient>

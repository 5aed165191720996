import { retry } from "@octokit/plugin-retry"
import { throttling } from "@octokit/plugin-throttling"
import { Octokit } from "@octokit/rest"
import { Clock, Effect, Option, Redacted } from "effect"
import type { CodeHostError } from "../../ports/CodeHost.js"
import type { GithubEndpoints } from "./GithubConfig.js"
import { type Credential, type HostFailure, type Subject, toCodeHostError } from "./GithubErrors.js"

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
  archiveCacheBytes: 32 * 1024 * 1024
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

/** The credential a request carries and the header that carries it. Tokens travel only in this header. */
export const authorizationFor = (
  token: Option.Option<Redacted.Redacted<string>>,
  serverToken: Option.Option<Redacted.Redacted<string>>
): { readonly credential: Credential; readonly header: Record<string, string> } => {
  if (Option.isSome(token)) return { credential: "listing", header: { authorization: `Bearer ${Redacted.value(token.value)}` } }
  if (Option.isSome(serverToken)) return { credential: "server", header: { authorization: `Bearer ${Redacted.value(serverToken.value)}` } }
  return { credential: "none", header: {} }
}

/**
 * GET requests to the GitHub REST API through Octokit with the throttling and retry plugins:
 * - primary rate limits fail at once with `rate_limited` (never wait out an hour inside a request);
 * - a secondary limit that asks for a few seconds at most is retried once;
 * - network failures and 5xx are retried `retries` times, 4xx never.
 */
export const makeGithubClient = (
  endpoints: GithubEndpoints,
  serverToken: Option.Option<Redacted.Redacted<string>>,
  tuning: GithubTuning
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

  const get = (route: string, params: Record<string, string | number>, options: GetOptions): Effect.Effect<Answer, CodeHostError> =>
    Effect.suspend(() => {
      const { credential, header } = authorizationFor(options.token, serverToken)
      const headers: Record<string, string> = {
        ...header,
        accept: options.accept ?? "application/vnd.github+json",
        "x-github-api-version": API_VERSION,
        ...(options.etag ? { "if-none-match": options.etag } : {})
      }
      return Effect.tryPromise({
        try: (signal) =>
          octokit.request(route, {
            ...params,
            headers,
            request: { signal: AbortSignal.any([signal, AbortSignal.timeout(tuning.requestTimeoutMs)]) }
          }),
        catch: (e) => e
      }).pipe(
        Effect.map((res): Answer => ({
          _tag: "Ok",
          data: res.data,
          etag: typeof res.headers.etag === "string" ? res.headers.etag : null,
          headers: res.headers as Record<string, string | undefined>
        })),
        Effect.catchAll((e) => {
          const failure = failureOf(e)
          if (failure.status === 304) return Effect.succeed<Answer>({ _tag: "NotModified" })
          return Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(toCodeHostError(failure, credential, options.what, now)))
        })
      )
    })

  return { get } as const
}

export type GithubClient = ReturnType<typeof makeGithubClient>

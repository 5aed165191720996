import { CodeHostError } from "../../ports/CodeHost.js"

/** Which credential a request carried: a listing's token, the server's `GITHUB_TOKEN`, or none. */
export type Credential = "listing" | "server" | "none"

/** A failed answer from the code host, reduced to what the mapping needs. Status 0: no answer at all. */
export interface HostFailure {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** GitHub's `message` field; used only to recognise a rate limit, never copied into our messages. */
  readonly hostMessage: string
}

/** GitHub's primary window is an hour; a longer hint is a clock problem, not advice. */
const MAX_RETRY_AFTER_SECONDS = 3600
const DEFAULT_RETRY_AFTER_SECONDS = 60

const header = (f: HostFailure, name: string): string | undefined => {
  const value = f.headers[name] ?? f.headers[name.toLowerCase()]
  return value === undefined || value === "" ? undefined : value
}

/** GitHub's documented signals: 403/429 with `x-ratelimit-remaining: 0`, a `retry-after`, or a rate-limit message. */
export const isRateLimit = (f: HostFailure): boolean =>
  (f.status === 403 || f.status === 429) &&
  (header(f, "x-ratelimit-remaining") === "0" || header(f, "retry-after") !== undefined || /rate limit/i.test(f.hostMessage))

/** Seconds to wait: `retry-after` (seconds or a date), else `x-ratelimit-reset` (epoch seconds), else a minute. */
export const retryAfterSeconds = (f: HostFailure, nowMs: number): number => {
  const clamp = (s: number) => Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(s)))
  const retryAfter = header(f, "retry-after")
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter)
    if (Number.isFinite(seconds)) return clamp(seconds)
    const date = Date.parse(retryAfter)
    if (Number.isFinite(date)) return clamp((date - nowMs) / 1000)
  }
  const reset = Number(header(f, "x-ratelimit-reset"))
  if (header(f, "x-ratelimit-reset") !== undefined && Number.isFinite(reset)) return clamp(reset - nowMs / 1000)
  return DEFAULT_RETRY_AFTER_SECONDS
}

const error = (reason: CodeHostError["reason"], message: string, retry?: number) =>
  new CodeHostError(retry === undefined ? { reason, message } : { reason, message, retryAfterSeconds: retry })

/** What was asked for, for messages. */
export type Subject = "repository" | "owner"

/**
 * Maps a failed answer to the port's error. Messages are ours: nothing from the request (a token) or the
 * host's body is echoed.
 */
export const toCodeHostError = (f: HostFailure, credential: Credential, what: Subject, nowMs: number): CodeHostError => {
  if (isRateLimit(f)) {
    return error("rate_limited", "The code host's rate limit was reached.", retryAfterSeconds(f, nowMs))
  }
  switch (f.status) {
    case 401:
      // The server's own GITHUB_TOKEN being refused is the operator's problem, not the seller's.
      return credential === "listing"
        ? error("token_rejected", "The code host rejected the token (expired, revoked or mistyped).")
        : error("unavailable", "The code host rejected the server's GITHUB_TOKEN.")
    case 403:
      return credential === "listing"
        ? error("token_lacks_access", `The token cannot read this ${what}.`)
        : error("repo_not_found", `The code host refused access to this ${what}.`)
    case 404:
    case 410:
    case 451:
      // Anonymously GitHub answers 404 for a private repository too.
      if (credential === "listing") return error("token_lacks_access", `The token cannot read this ${what}, or it does not exist.`)
      return what === "owner"
        ? error("repo_not_found", "The code host has no such owner.")
        : error("repo_not_found", "The repository is missing or private (add host_pat).")
    case 409:
      return error("repo_not_found", `The ${what} is empty: it has no commits yet.`)
  }
  if (f.status === 0) return error("unavailable", "The code host did not answer.")
  return error("unavailable", `The code host answered HTTP ${f.status}.`)
}

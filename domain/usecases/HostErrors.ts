import { HostRefused, HostUnavailable } from "../Errors.js"
import type { CodeHostError } from "../../ports/CodeHost.js"

/** What a code-host failure means to the caller: a refusal of what was given (422), or an outage (503). */
export const fromCodeHost = (e: CodeHostError): HostRefused | HostUnavailable => {
  switch (e.reason) {
    case "repo_not_found":
      return new HostRefused({ reason: e.reason, detail: "The code host has no such repository (or it is private: add host_pat)." })
    case "private_repo_needs_token":
      return new HostRefused({ reason: e.reason, detail: "The repository is private: add host_pat, a read-only token for it." })
    case "token_rejected":
      return new HostRefused({ reason: e.reason, detail: "The code host rejected host_pat (expired, revoked or mistyped)." })
    case "token_lacks_access":
      return new HostRefused({ reason: e.reason, detail: "host_pat cannot read this repository's contents." })
    case "rate_limited":
    case "unavailable":
    case "quota_reserved":
      return outage(e)
  }
}

/** A failure that says nothing about the repo or the token: the host is down or rate-limiting us (or we kept our quota). */
export const isOutage = (e: CodeHostError): boolean =>
  e.reason === "rate_limited" || e.reason === "unavailable" || e.reason === "quota_reserved"

/** The 503 for a code-host outage, with a retry hint (60 s for a rate limit when the host gave none). */
export const outage = (e: CodeHostError): HostUnavailable =>
  new HostUnavailable({
    retryAfterSeconds: e.retryAfterSeconds ?? (e.reason === "rate_limited" ? 60 : null),
    detail: e.reason === "rate_limited"
      ? "The code host's rate limit was reached; try again later."
      : e.reason === "quota_reserved"
      ? "The server keeps the rest of its code-host quota for previews and purchases; try again after the hour resets."
      : "The code host did not answer; try again later."
  })

/** For delivering paid goods: an outage, or the seller's repo or token no longer serving it. */
export const cannotDeliver = (e: CodeHostError): HostUnavailable =>
  isOutage(e) ? outage(e) : new HostUnavailable({ retryAfterSeconds: null, detail: "The seller's repository cannot be delivered right now." })

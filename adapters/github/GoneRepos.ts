import { Clock, Effect, type Option, type Redacted, Stream } from "effect"
import type { CodeHostError } from "../../ports/CodeHost.js"
import { credentialKey } from "./EtagCache.js"

/**
 * How long GitHub's word that a repository or commit is gone for a credential is taken without asking again: the
 * same 10 minutes a found repository is served from the cache (a push shows within 10 minutes; so does a repository
 * created, made public, or given back to a token after it was asked for).
 */
export const GONE_FRESH_MS = 10 * 60_000

/** Repositories and commits remembered at most (the oldest forgotten first): about 2 MB. */
export const MAX_GONE = 10_000

type Token = Option.Option<Redacted.Redacted<string>>

interface Gone {
  readonly error: CodeHostError
  readonly until: number
}

/**
 * Whether a failure says the repository (or the commit, or the credential's access to it) is gone, rather than
 * that the host is down or busy: a 404/410/451 (deleted, private to this credential, taken down), a token
 * refused or revoked (401/403 with a listing's token), GitHub's 403 to an anonymous read. An empty repository
 * (409) is not gone, only not yet pushed to; outages, rate limits and the quota's reserve never are.
 */
export const isGone = (e: CodeHostError): boolean =>
  (e.reason === "repo_not_found" && !/\bis empty\b/.test(e.message)) || e.reason === "token_rejected" || e.reason === "token_lacks_access"

/**
 * What the code host said is gone, remembered per repository (case-insensitive) and credential (`public` for
 * anonymous and server-token reads, else a digest of the listing's token, as in the answer cache) for
 * `GONE_FRESH_MS`, and per commit for archives. While remembered, asking again fails with the same error and sends
 * nothing: a receipt of a deleted repository, or of a listing taken down (its token destroyed), asked a hundred
 * times costs one call, not a hundred, and a failed download is not retried per request. A repository's entry
 * answers for its commits too (a repository gone for a credential has no archive for it).
 */
export class GoneRepos {
  private readonly entries = new Map<string, Gone>()

  constructor(readonly freshMs: number = GONE_FRESH_MS, readonly maxEntries: number = MAX_GONE) {}

  get size(): number {
    return this.entries.size
  }

  private static keyOf(ref: { readonly owner: string; readonly name: string }, token: Token, commitSha: string | null): string {
    const repo = `${ref.owner.toLowerCase()}/${ref.name.toLowerCase()} ${credentialKey(token)}`
    return commitSha === null ? repo : `${repo} @${commitSha.toLowerCase()}`
  }

  private fresh(key: string, now: number): CodeHostError | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (now < entry.until) return entry.error
    this.entries.delete(key)
    return undefined
  }

  /** The remembered refusal of the repository (any commit), or of this commit when given; undefined when none is fresh. */
  known(ref: { readonly owner: string; readonly name: string }, token: Token, commitSha: string | null, now: number): CodeHostError | undefined {
    return this.fresh(GoneRepos.keyOf(ref, token, null), now) ??
      (commitSha === null ? undefined : this.fresh(GoneRepos.keyOf(ref, token, commitSha), now))
  }

  /** Remembers `error` for the repository (or this commit of it) when it says it is gone; anything else is not kept. */
  remember(ref: { readonly owner: string; readonly name: string }, token: Token, commitSha: string | null, error: CodeHostError, now: number): void {
    if (!isGone(error) || this.freshMs <= 0) return
    const key = GoneRepos.keyOf(ref, token, commitSha)
    this.entries.delete(key)
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { error, until: now + this.freshMs })
  }

  /** `ask`, unless the repository is remembered as gone for this credential (then its error, nothing sent); a gone answer is remembered. */
  guard<A>(ref: { readonly owner: string; readonly name: string }, token: Token, ask: Effect.Effect<A, CodeHostError>): Effect.Effect<A, CodeHostError> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const known = this.known(ref, token, null, now)
      if (known !== undefined) return Effect.fail(known)
      return ask.pipe(Effect.tapError((e) => Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => this.remember(ref, token, null, e, at)))))
    })
  }

  /**
   * The download of one commit's archive, unless the repository or that commit is remembered as gone for this
   * credential (then a stream failing with its error, nothing sent); a gone answer to it is remembered for the commit.
   */
  guardArchive<E extends CodeHostError>(
    ref: { readonly owner: string; readonly name: string },
    commitSha: string,
    token: Token,
    download: Stream.Stream<Uint8Array, E>
  ): Stream.Stream<Uint8Array, E | CodeHostError> {
    return Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) => {
      const known = this.known(ref, token, commitSha, now)
      if (known !== undefined) return Stream.fail(known)
      return download.pipe(Stream.tapError((e) => Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sync(() => this.remember(ref, token, commitSha, e, at)))))
    }))
  }
}

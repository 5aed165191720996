import { Context, Data, type Effect, type Option, type Redacted, type Stream } from "effect"
import type { RepoRef } from "../domain/Ids.js"

/** What the code host says about one repository. `ref` is in the host's canonical case. */
export interface RepoInfo {
  readonly ref: RepoRef
  readonly htmlUrl: string
  readonly isPrivate: boolean
  readonly defaultBranch: string
  readonly headSha: string
  readonly description: string | null
  readonly language: string | null
  readonly stars: number
  readonly topics: ReadonlyArray<string>
  readonly license: string | null
}

export interface TreeEntry {
  readonly path: string
  readonly type: "file" | "dir"
  readonly size: number | null
}

export interface RepoTree {
  readonly entries: ReadonlyArray<TreeEntry>
  /** True when the host or our limit cut the listing short. */
  readonly truncated: boolean
}

export interface Readme {
  readonly path: string
  readonly markdown: string
  /** Rendered and sanitised: no script, no event handlers, no javascript: links. */
  readonly html: string
}

/** An owner's public repository, as the owner page's `indexed` list needs it. */
export type OwnerRepo = Omit<RepoInfo, "defaultBranch" | "headSha">

export type CodeHostFailure =
  | "repo_not_found"
  | "private_repo_needs_token"
  | "token_rejected"
  | "token_lacks_access"
  | "rate_limited"
  | "unavailable"

export class CodeHostError extends Data.TaggedError("CodeHostError")<{
  readonly reason: CodeHostFailure
  readonly retryAfterSeconds?: number
  readonly message: string
}> {}

/**
 * The code host (GitHub). A `token` is a listing's read-only token for a private repo; it is sent only to
 * the host's API and only as an Authorization header.
 */
export class CodeHost extends Context.Tag("ports/CodeHost")<CodeHost, {
  readonly repo: (
    ref: { readonly owner: string; readonly name: string },
    token: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<RepoInfo, CodeHostError>
  readonly tree: (repo: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) => Effect.Effect<RepoTree, CodeHostError>
  readonly readme: (
    repo: RepoInfo,
    token: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<Option.Option<Readme>, CodeHostError>
  /** The tarball of one commit, streamed: never buffered whole. */
  readonly archive: (
    ref: RepoRef,
    commitSha: string,
    token: Option.Option<Redacted.Redacted<string>>
  ) => Stream.Stream<Uint8Array, CodeHostError>
  /** The owner's public repositories. */
  readonly ownerRepos: (owner: string) => Effect.Effect<ReadonlyArray<OwnerRepo>, CodeHostError>
  /** The owner's page on the code host. */
  readonly ownerUrl: (owner: string) => string
}>() {}

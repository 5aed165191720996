import { Context, Data, type Effect, type Option, type Redacted, Stream } from "effect"
import type { RepoTree } from "../domain/Goods.js"
import type { RepoRef } from "../domain/Ids.js"
import type { ArchiveDigest } from "../domain/ReceiptClaims.js"

// A repository tree is model data (the test goods are made from it); re-exported here under the names adapters
// and hosts have always imported them by.
export type { RepoTree, TreeEntry } from "../domain/Goods.js"
// A commit's archive digest is model data (receipts and offers carry it); re-exported for the adapters.
export type { ArchiveDigest } from "../domain/ReceiptClaims.js"

/** What the code host says about one repository. `ref` is in the host's canonical case. */
export interface RepoInfo {
  /** The repository, in the host's canonical case. */
  readonly ref: RepoRef
  /** The repository's page on the code host. */
  readonly htmlUrl: string
  /** Whether the repository is private (reading it needs a token). */
  readonly isPrivate: boolean
  /** The default branch's name. */
  readonly defaultBranch: string
  /** The commit at the head of the default branch: what a buyer gets. */
  readonly headSha: string
  /** The repository's description. */
  readonly description: string | null
  /** The primary language, as the host detects it. */
  readonly language: string | null
  /** The star count. */
  readonly stars: number
  /** The repository's topics. */
  readonly topics: ReadonlyArray<string>
  /** The license's SPDX id, when the host detects one. */
  readonly license: string | null
}

/** A repository's README, for the repo page and the catalog's search. */
export interface Readme {
  /** Its path in the repository. */
  readonly path: string
  /** Its Markdown source. */
  readonly markdown: string
  /** Rendered and sanitised: no script, no event handlers, no javascript: links. */
  readonly html: string
}

/** An owner's public repository, as the owner page's `indexed` list needs it. */
export type OwnerRepo = Omit<RepoInfo, "defaultBranch" | "headSha">

/**
 * Why a code-host call failed: the repo or the token (`repo_not_found`, `private_repo_needs_token`,
 * `token_rejected`, `token_lacks_access`), the host itself (`rate_limited`, `unavailable`), or the server
 * keeping the rest of its quota for previews and purchases (`quota_reserved`: an anonymous lookup such as an
 * owner's index was not sent at all).
 */
export type CodeHostFailure =
  | "repo_not_found"
  | "private_repo_needs_token"
  | "token_rejected"
  | "token_lacks_access"
  | "rate_limited"
  | "unavailable"
  | "quota_reserved"

/**
 * Who asks for a cut (`CodeHost.cut`): a delivery of a settled sale (`paid`), or an unpaid request, a 402 offer or
 * a repo page view (`offer`).
 */
export type CutPurpose = "paid" | "offer"

/** Raised by every `CodeHost` call that fails; `reason` tells a refusal from an outage. */
export class CodeHostError extends Data.TaggedError("CodeHostError")<{
  readonly reason: CodeHostFailure
  readonly retryAfterSeconds?: number
  readonly message: string
}> {}

/**
 * The code host (GitHub). A `token` is a listing's read-only token for a private repo; it is sent only to
 * the host's API and only as an Authorization header.
 */
export class CodeHost extends Context.Tag("repomarket/CodeHost")<CodeHost, {
  readonly repo: (
    ref: { readonly owner: string; readonly name: string },
    token: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<RepoInfo, CodeHostError>
  readonly tree: (repo: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) => Effect.Effect<RepoTree, CodeHostError>
  readonly readme: (
    repo: RepoInfo,
    token: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<Option.Option<Readme>, CodeHostError>
  /**
   * The tarball of one commit of `ref` (fetched by its sha, never by a branch name), streamed: never buffered
   * whole, except an archive the adapter already holds in memory, which it may answer with `wholeArchive`
   * (hosts may then send it as one buffer, with its length). A sha the repository does not have fails.
   * The first archive of a commit that streams to its end records its `ArchiveDigest`; a later archive of
   * that commit whose bytes differ fails at its end (a host then cuts the connection), never delivered whole.
   * Asked only for a settled sale (a delivery, a re-download), so what an adapter keeps of it is a purchased archive.
   */
  readonly archive: (
    ref: RepoRef,
    commitSha: string,
    token: Option.Option<Redacted.Redacted<string>>
  ) => Stream.Stream<Uint8Array, CodeHostError>
  /**
   * The digest of the archive of `commitSha`, when this host cut one before (see `archive`) or keeps one (the
   * GitHub adapter's archives on disk, shared by the processes of one DATA_DIR and kept across restarts); none
   * yet otherwise. Asks nothing of the code host.
   */
  readonly archiveDigest: (ref: RepoRef, commitSha: string) => Effect.Effect<Option.Option<ArchiveDigest>>
  /**
   * Cuts the archive of `commitSha` ahead of its delivery: reads it whole, as `archive` would, and keeps it where
   * this adapter keeps archives, so that its digest is known (`archiveDigest`) and the next `archive` of that
   * commit is those bytes. The digest once cut (or when known already); none when this adapter could not keep it
   * (larger than it keeps for that `purpose`, or a name that is not a commit id), its download then stopped as
   * soon as that is clear, never read to its end for nothing. Fails as `archive` does. A cut comes ahead of any
   * sale: an adapter with a shared quota may refuse it (`quota_reserved`) rather than spend what previews and
   * purchases need.
   *
   * `purpose` says who asked: `"paid"`, a delivery of a settled sale (kept with the purchased archives); `"offer"`,
   * an unpaid request (a 402, a repo page view), which an adapter keeps apart, within a smaller budget that can
   * never push a purchased archive out, and may decline (none) for an archive larger than an offer may cut. An
   * archive later delivered (`archive`) is a purchased one from then on.
   */
  readonly cut: (
    ref: RepoRef,
    commitSha: string,
    token: Option.Option<Redacted.Redacted<string>>,
    purpose: CutPurpose
  ) => Effect.Effect<Option.Option<ArchiveDigest>, CodeHostError>
  /**
   * The owner's public repositories. An anonymous lookup anybody can trigger for any name: an adapter with a
   * shared quota may refuse it (`quota_reserved`) rather than spend what previews and purchases need.
   */
  readonly ownerRepos: (owner: string) => Effect.Effect<ReadonlyArray<OwnerRepo>, CodeHostError>
  /** The owner's page on the code host. */
  readonly ownerUrl: (owner: string) => string
}>() {}

const WholeArchive: unique symbol = Symbol.for("repomarket/ports/CodeHost/WholeArchive")

/**
 * An archive already whole in memory, as the stream `CodeHost.archive` answers: streamed like any other,
 * and recognised by `wholeArchiveBytes`, so a host can send it in one write with a Content-Length.
 */
export const wholeArchive = (bytes: Uint8Array): Stream.Stream<Uint8Array> =>
  Object.assign(Stream.succeed(bytes), { [WholeArchive]: bytes })

/** The bytes of a stream made by `wholeArchive` (not of anything derived from it); otherwise undefined. */
export const wholeArchiveBytes = (stream: Stream.Stream<Uint8Array, unknown>): Uint8Array | undefined => {
  const bytes = (stream as { readonly [WholeArchive]?: unknown })[WholeArchive]
  return bytes instanceof Uint8Array ? bytes : undefined
}

import { createHash } from "node:crypto"
import { Effect, Stream } from "effect"
import { commitKey, type RepoRef } from "../../domain/Ids.js"
import { type ArchiveDigest, CodeHostError, wholeArchiveBytes } from "../../ports/CodeHost.js"

/** A full commit id: only an archive named by one is immutable (a branch or tag name can move). */
const FULL_SHA = /^[0-9a-f]{40}$/i

/** Whether `sha` is a full commit id, the only name whose archive is recorded (and kept). */
export const isCommitId = (sha: string): boolean => FULL_SHA.test(sha)

/** SHA-256 (hex) and length of whole bytes. */
export const digestOf = (bytes: Uint8Array): ArchiveDigest => ({
  sha256: createHash("sha256").update(bytes).digest("hex"),
  size: bytes.length
})

const changed = (ref: RepoRef, commitSha: string) =>
  new CodeHostError({
    reason: "unavailable",
    message: `The code host's archive of ${ref.owner}/${ref.name} at ${commitSha.slice(0, 12)} differs from the one cut before (another SHA-256); it is not delivered.`
  })

/**
 * The SHA-256 and size of each commit's archive, learnt from the first archive of that commit that streamed to
 * its end (a cut), kept in this process's memory (at most `maxEntries`, the oldest dropped first).
 *
 * Every later archive of the same commit is checked against it while it streams: bytes that differ (a code host
 * that re-generated the archive) fail the stream at its end, so a host cuts the connection instead of
 * finishing a response whose `Repr-Digest` and receipt name other bytes. Keyed by repository (lower case, as
 * GitHub's names are case-insensitive) and commit; archives of branch names are never recorded.
 */
export class ArchiveDigests {
  private readonly known = new Map<string, ArchiveDigest>()

  constructor(readonly maxEntries = 10_000) {}

  private keyOf(ref: RepoRef, commitSha: string): string | undefined {
    return isCommitId(commitSha) ? commitKey(ref, commitSha) : undefined
  }

  /** The digest of the commit's archive, if one was cut here. */
  get(ref: RepoRef, commitSha: string): ArchiveDigest | undefined {
    const key = this.keyOf(ref, commitSha)
    return key === undefined ? undefined : this.known.get(key)
  }

  /**
   * Records the digest of a commit's archive learnt elsewhere (an archive kept on disk by another process, or
   * before a restart): false, recording nothing, when another digest is already known for it.
   */
  learn(ref: RepoRef, commitSha: string, digest: ArchiveDigest): boolean {
    const key = this.keyOf(ref, commitSha)
    return key !== undefined && this.record(key, digest)
  }

  private record(key: string, digest: ArchiveDigest): boolean {
    const before = this.known.get(key)
    if (before !== undefined) return before.sha256 === digest.sha256 && before.size === digest.size
    if (this.known.size >= this.maxEntries) this.known.delete(this.known.keys().next().value!)
    this.known.set(key, digest)
    return true
  }

  /**
   * The archive, its digest recorded once it streamed to its end, and checked against the one recorded
   * before. Whole bytes (an archive held in memory, see `wholeArchive`) are checked at once and keep their form.
   */
  through(ref: RepoRef, commitSha: string, archive: Stream.Stream<Uint8Array, CodeHostError>): Stream.Stream<Uint8Array, CodeHostError> {
    const key = this.keyOf(ref, commitSha)
    if (key === undefined) return archive
    const whole = wholeArchiveBytes(archive)
    if (whole !== undefined) return this.record(key, digestOf(whole)) ? archive : Stream.fail(changed(ref, commitSha))
    return Stream.suspend(() => {
      const hash = createHash("sha256")
      let size = 0
      return archive.pipe(
        Stream.tap((chunk) =>
          Effect.sync(() => {
            hash.update(chunk)
            size += chunk.length
          })
        ),
        // Runs only when the archive reached its end.
        Stream.concat(Stream.execute(Effect.suspend(() =>
          this.record(key, { sha256: hash.digest("hex"), size }) ? Effect.void : Effect.fail(changed(ref, commitSha))
        )))
      )
    })
  }
}

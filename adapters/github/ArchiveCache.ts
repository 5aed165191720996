import { Chunk, Effect, Stream } from "effect"
import { commitKey, type RepoRef } from "../../domain/Ids.js"
import { wholeArchive } from "../../ports/CodeHost.js"
import { isCommitId } from "../crypto/ArchiveDigests.js"

/**
 * Archives of pinned commits, kept in this process's memory. A commit's archive never changes, so when a
 * launch brings a crowd to one listing, the code host is asked for it once, not once per buyer (each
 * archive is an API request, out of GitHub's 5 000 an hour per token, and a download from codeload), and
 * each purchase after the first costs no download.
 *
 * Only small archives are kept (each at most `maxEntryBytes`; a larger one streams through untouched, its
 * bytes never held whole) and at most `maxBytes` in all, the least recently used dropped first. An archive is
 * kept only once it streamed to its end: a broken download is never served from here. While downloads are in
 * flight, what they have collected so far also stays within `maxBytes` in all (a download that would pass it
 * streams on without collecting), so a crowd of slow first buyers cannot hold more than that.
 *
 * Nothing here decides who may have the bytes: callers reach `through` only for a paid sale (or its
 * receipt) of that repository at that commit, exactly as they reach the code host. An archive is kept under
 * the credential it was read with (as the answer cache keys its entries): a private repository's archive is
 * answered from memory only to a read with the same token, so once a takedown destroys the token, receipts
 * are answered by the code host again, as before anything was kept.
 */
export class ArchiveCache {
  private readonly entries = new Map<string, Uint8Array>()
  private bytes = 0
  /** Bytes collected by downloads still in flight. */
  private collecting = 0

  constructor(readonly maxEntryBytes: number, readonly maxBytes: number) {}

  private keyOf(ref: RepoRef, commitSha: string, credential: string): string | undefined {
    // Names are case-insensitive on GitHub; only a full commit id names bytes that cannot move.
    return isCommitId(commitSha) ? `${commitKey(ref, commitSha)} ${credential}` : undefined
  }

  private get(key: string): Uint8Array | undefined {
    const bytes = this.entries.get(key)
    if (bytes !== undefined) {
      // Most recently used last.
      this.entries.delete(key)
      this.entries.set(key, bytes)
    }
    return bytes
  }

  private set(key: string, bytes: Uint8Array): void {
    if (bytes.length > this.maxEntryBytes || bytes.length > this.maxBytes || this.entries.has(key)) return
    while (this.bytes + bytes.length > this.maxBytes) {
      const [oldest, value] = this.entries.entries().next().value!
      this.entries.delete(oldest)
      this.bytes -= value.length
    }
    this.entries.set(key, bytes)
    this.bytes += bytes.length
  }

  /**
   * The archive of `ref` at `commitSha` read with `credential` (a digest of the token, see `credentialKey`):
   * from memory when held (as a `wholeArchive`, decided now), else `download`, kept if small.
   */
  through<E>(ref: RepoRef, commitSha: string, credential: string, download: Stream.Stream<Uint8Array, E>): Stream.Stream<Uint8Array, E> {
    const key = this.keyOf(ref, commitSha, credential)
    if (key === undefined || this.maxEntryBytes <= 0) return download
    const held = this.get(key)
    if (held !== undefined) return wholeArchive(held)
    return Stream.suspend(() => {
      let parts: Array<Uint8Array> | null = []
      let size = 0
      const stopCollecting = () => {
        if (parts !== null) {
          this.collecting -= size
          parts = null
        }
      }
      return download.pipe(
        Stream.mapChunks((chunk) => {
          if (parts !== null) {
            const received = Chunk.toReadonlyArray(chunk)
            let bytes = 0
            for (const part of received) bytes += part.length
            if (size + bytes > this.maxEntryBytes || this.collecting + bytes > this.maxBytes) {
              stopCollecting()
            } else {
              for (const part of received) parts.push(part)
              size += bytes
              this.collecting += bytes
            }
          }
          return chunk
        }),
        // Runs only when the download reached its end.
        Stream.concat(Stream.execute(Effect.sync(() => {
          if (parts === null) return
          const whole = Buffer.concat(parts, size)
          stopCollecting()
          this.set(key, whole)
        }))),
        // A download that failed or was abandoned gives back what it collected.
        Stream.ensuring(Effect.sync(stopCollecting))
      )
    })
  }
}

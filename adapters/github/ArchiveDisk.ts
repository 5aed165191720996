import { createHash, randomBytes } from "node:crypto"
import { type FileHandle, mkdir, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises"
import { basename, join } from "node:path"
import { Chunk, Effect, Option, Stream } from "effect"
import { commitKey, type RepoRef } from "../../model/Ids.js"
import { isArchiveDigest } from "../../model/ReceiptClaims.js"
import { type ArchiveDigest, CodeHostError } from "../../ports/CodeHost.js"
import { isCommitId } from "../crypto/ArchiveDigests.js"


const ARCHIVE_SUFFIX = ".tar.gz"
const PART_SUFFIX = ".part"
/** A partial file this old belongs to no download still running (one that crashed its process). */
const ABANDONED_PART_MS = 24 * 60 * 60 * 1000
const READ_CHUNK_BYTES = 64 * 1024
/** Each kept archive's SHA-256 and size as JSON, written when it was kept, in a directory beside the archives'. */
const DIGEST_SUFFIX = ".sha256.json"

/**
 * Archives of purchased commits, kept on disk (under `<DATA_DIR>/archives`) so that re-downloads by receipt,
 * by Sign-In-With-X or by the buyer's payment-identifier retry, and the next buyers of the same commit, do not
 * go back to the code host: each archive otherwise costs a request of the server's (or the seller's) hourly
 * GitHub quota and a download from codeload.
 *
 * - **Keyed by repository and commit** (a SHA-256 of `owner/name@sha`, lower case, as the file name): a
 *   commit's archive never changes. Archives of branch names are never kept.
 * - **Bounded**: at most `maxBytes` in all; after each new archive the least recently used (by modification
 *   time, renewed on every hit) are deleted until the rest fits. An archive larger than the whole budget is
 *   streamed without being kept.
 * - **Only whole archives**: bytes are written to a private partial file while they stream to the buyer and
 *   renamed into place only once the download reached its end, so a broken download is never served from
 *   here. A write that fails (a full disk) stops keeping; it never fails the buyer's download.
 * - **Who gets the bytes** is decided by the callers, as for the code host: `CodeHost.archive` hands them out
 *   only for a settled sale of that repository at that commit (a purchase, its receipt, the paying wallet, the
 *   buyer's payment-identifier retry); `CodeHost.cut` keeps them ahead of a sale and hands them to no one. A
 *   private repository is read with the listing's own token, which proves that token could read that commit
 *   then; a taken-down listing sells nothing (its
 *   checkout answers 410), so no new buyer reaches its archive, while receipts of sales already settled may
 *   still re-download it from here (the code host would refuse them once the token is destroyed).
 * - Files are created with mode 0600 in a 0700 directory. The directory is created on the first archive
 *   kept, never at start-up. Several processes may share it (renames are atomic; each evicts by what it finds
 *   on disk).
 */
export class ArchiveDisk {
  /** Where the digest files live: `<dir>-digests`, so the archives' directory holds archives only. */
  private readonly digestDir: string

  constructor(readonly dir: string, readonly maxBytes: number) {
    this.digestDir = `${dir}-digests`
  }

  private digestFileOf(archivePath: string): string {
    return join(this.digestDir, basename(archivePath) + DIGEST_SUFFIX)
  }

  private fileOf(ref: RepoRef, commitSha: string): string | undefined {
    if (!isCommitId(commitSha)) return undefined
    return createHash("sha256").update(commitKey(ref, commitSha), "utf8").digest("hex")
  }

  /** The kept archive of `ref` at `commitSha`, else `download`, kept on its way through when it fits. */
  through(ref: RepoRef, commitSha: string, download: Stream.Stream<Uint8Array, CodeHostError>): Stream.Stream<Uint8Array, CodeHostError> {
    const file = this.fileOf(ref, commitSha)
    if (file === undefined || this.maxBytes <= 0) return download
    const path = join(this.dir, file + ARCHIVE_SUFFIX)
    return Stream.unwrap(Effect.map(
      Effect.promise(async () => {
        const handle = await open(path, "r").catch(() => null)
        if (handle === null) return null
        // Used now: renewed for the eviction order (least recently used first out).
        const now = new Date()
        await utimes(path, now, now).catch(() => undefined)
        return handle
      }),
      (handle) => handle === null ? this.keeping(file, path, download) : this.served(handle)
    ))
  }

  /**
   * The SHA-256 and size of the kept archive of `ref` at `commitSha`, if one is kept: by this process or another
   * sharing the directory, before a restart or after. Read from the small digest file written beside the archive
   * when it was kept (hashed as its bytes were written), never by hashing the archive itself: the 402 asks for
   * this, and a large archive would cost it seconds. None when nothing is kept, when the digest file is missing
   * or does not describe the archive there (its size differs), or when either cannot be read.
   */
  digest(ref: RepoRef, commitSha: string): Effect.Effect<Option.Option<ArchiveDigest>> {
    const file = this.fileOf(ref, commitSha)
    if (file === undefined || this.maxBytes <= 0) return Effect.succeed(Option.none())
    const path = join(this.dir, file + ARCHIVE_SUFFIX)
    return Effect.promise(async () => {
      const [info, text] = await Promise.all([stat(path).catch(() => null), readFile(this.digestFileOf(path), "utf8").catch(() => null)])
      if (info === null || text === null) return Option.none()
      try {
        const digest: unknown = JSON.parse(text)
        return isArchiveDigest(digest) && digest !== null && digest.size === info.size ? Option.some(digest) : Option.none()
      } catch {
        return Option.none()
      }
    })
  }

  /** A kept archive, read in chunks. */
  private served(handle: FileHandle): Stream.Stream<Uint8Array, CodeHostError> {
    return Stream.acquireRelease(Effect.succeed(handle), (h) => Effect.promise(() => h.close().catch(() => undefined))).pipe(
      Stream.flatMap((h) =>
        Stream.repeatEffectOption(
          Effect.tryPromise({
            try: async () => {
              const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES)
              const { bytesRead } = await h.read(buffer, 0, READ_CHUNK_BYTES, null)
              return bytesRead === 0 ? null : buffer.subarray(0, bytesRead)
            },
            catch: () => new CodeHostError({ reason: "unavailable", message: "The kept archive could not be read." })
          }).pipe(
            Effect.mapError(Option.some),
            Effect.flatMap((chunk) => chunk === null ? Effect.fail(Option.none()) : Effect.succeed<Uint8Array>(chunk))
          )
        ))
    )
  }

  /** `download` as it is, its bytes also written to a partial file that becomes the kept archive at the end. */
  private keeping(file: string, path: string, download: Stream.Stream<Uint8Array, CodeHostError>): Stream.Stream<Uint8Array, CodeHostError> {
    return Stream.suspend(() => {
      const part = join(this.dir, `.${file}.${process.pid}.${randomBytes(6).toString("hex")}${PART_SUFFIX}`)
      let handle: FileHandle | null = null
      let size = 0
      let keeping = true
      const hash = createHash("sha256")
      const drop = async () => {
        keeping = false
        const h = handle
        handle = null
        if (h !== null) {
          await h.close().catch(() => undefined)
          await unlink(part).catch(() => undefined)
        }
      }
      const write = async (parts: ReadonlyArray<Uint8Array>) => {
        if (!keeping) return
        let bytes = 0
        for (const p of parts) bytes += p.length
        if (size + bytes > this.maxBytes) return drop()
        try {
          if (handle === null) {
            await mkdir(this.dir, { recursive: true, mode: 0o700 })
            handle = await open(part, "wx", 0o600)
          }
          for (const p of parts) {
            await handle.write(p)
            hash.update(p)
          }
          size += bytes
        } catch {
          await drop()
        }
      }
      const finish = async () => {
        if (!keeping) return
        keeping = false
        const h = handle
        handle = null
        if (h === null) return
        try {
          await h.close()
          await rename(part, path)
        } catch {
          await unlink(part).catch(() => undefined)
          return
        }
        // The digest file: what `digest` answers other processes and later lives with (a failed write leaves none).
        const digest = JSON.stringify({ sha256: hash.digest("hex"), size })
        await mkdir(this.digestDir, { recursive: true, mode: 0o700 })
          .then(() => writeFile(this.digestFileOf(path), digest, { mode: 0o600 }))
          .catch(() => undefined)
        await this.evict().catch(() => undefined)
      }
      return download.pipe(
        Stream.mapChunksEffect((chunk) => Effect.as(Effect.promise(() => write(Chunk.toReadonlyArray(chunk))), chunk)),
        // Runs only when the download reached its end.
        Stream.concat(Stream.execute(Effect.promise(finish))),
        // A download that failed or was abandoned leaves nothing behind.
        Stream.ensuring(Effect.promise(drop))
      )
    })
  }

  /** Deletes the least recently used archives until the rest fit in `maxBytes` (and partial files long abandoned). */
  async evict(): Promise<void> {
    const names = await readdir(this.dir)
    const now = Date.now()
    const kept: Array<{ readonly path: string; readonly size: number; readonly usedAt: number }> = []
    for (const name of names) {
      const path = join(this.dir, name)
      const info = await stat(path).catch(() => null)
      if (info === null || !info.isFile()) continue
      if (name.endsWith(PART_SUFFIX)) {
        if (now - info.mtimeMs > ABANDONED_PART_MS) await unlink(path).catch(() => undefined)
      } else if (name.endsWith(ARCHIVE_SUFFIX)) {
        kept.push({ path, size: info.size, usedAt: info.mtimeMs })
      }
    }
    let total = kept.reduce((sum, k) => sum + k.size, 0)
    kept.sort((a, b) => a.usedAt - b.usedAt)
    for (const k of kept) {
      if (total <= this.maxBytes) break
      await unlink(k.path).catch(() => undefined)
      await unlink(this.digestFileOf(k.path)).catch(() => undefined)
      total -= k.size
    }
  }
}

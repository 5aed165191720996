import { createHash, randomBytes } from "node:crypto"
import { type FileHandle, mkdir, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Chunk, Effect, Option, Stream } from "effect"
import { commitKey, type RepoRef } from "../../domain/Ids.js"
import { type ArchiveDigest, CodeHostError } from "../../ports/CodeHost.js"
import { isCommitId } from "../crypto/ArchiveDigests.js"
import { type ArchiveSeal, MAX_HEADER_BYTES, type Opening, RECORD_BYTES, sealedSize } from "../crypto/ArchiveSeal.js"

const SEALED_SUFFIX = ".sealed"
/** An archive kept in the clear by an earlier version: sealed at start-up, then deleted. */
const LEGACY_SUFFIX = ".tar.gz"
const PART_SUFFIX = ".part"
/** A partial file this old belongs to no download still running, whatever process wrote it. */
const ABANDONED_PART_MS = 24 * 60 * 60 * 1000
/** Each kept archive's SHA-256, size and stored size as JSON, written when it was kept, in a directory beside the archives'. */
const DIGEST_SUFFIX = ".sha256.json"
const FILE_ID = /^[0-9a-f]{64}$/
/** `.<file>.<pid>.<random>.part`: the process that writes it. */
const PART_NAME = /^\.([0-9a-f]{64})\.(\d+)\.[0-9a-f]+\.part$/
const COPY_CHUNK_BYTES = 1024 * 1024

const unreadable = () => new CodeHostError({ reason: "unavailable", message: "The kept archive could not be read." })

/** Whether a process with this id runs on this machine (one of another user's counts as running). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM"
  }
}

/** Reads up to `buffer.length` bytes at `position`, short only at the file's end. */
const readFully = async (handle: FileHandle, buffer: Buffer, position: number): Promise<number> => {
  let read = 0
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(buffer, read, buffer.length - read, position + read)
    if (bytesRead === 0) break
    read += bytesRead
  }
  return read
}

interface Kept {
  readonly handle: FileHandle
  readonly opening: Opening
}

/** Options of an ArchiveDisk beyond its directory and budget. */
export interface ArchiveDiskOptions {
  /** The largest archive kept here (unset: the whole budget). */
  readonly maxEntryBytes?: number
  /** Where an archive not kept here is taken from (moved here) before it is downloaded: offers' cuts, for purchases. */
  readonly from?: ArchiveDisk | null
}

/**
 * Archives kept on disk (a directory under `DATA_DIR`) so that re-downloads by receipt, by Sign-In-With-X or by
 * the buyer's payment-identifier retry, and the next buyers of the same commit, do not go back to the code host:
 * each archive otherwise costs a request of the server's (or the seller's) hourly GitHub quota and a download from
 * codeload. The GitHub adapter keeps two: purchased archives (`archives`, `ARCHIVE_CACHE_BYTES`) and offers' cuts
 * (`archives-offers`, `ARCHIVE_OFFER_BYTES`), each evicting only its own, so unpaid requests can never push a
 * purchased archive out; an offer's cut that a sale then delivers is moved into the purchased ones (`from`).
 *
 * - **Keyed by repository and commit** (a SHA-256 of `owner/name@sha`, lower case, as the file name): a
 *   commit's archive never changes. Archives of branch names are never kept.
 * - **Sealed** (ArchiveSeal.ts): with the keys of `SECRET_KEYS`, in records, so no archive (a private
 *   repository's included) is on disk in the clear, and reading or writing one holds one record in memory.
 *   An archive whose key is no longer listed, or whose bytes do not authenticate, is deleted and downloaded again.
 * - **Bounded**: at most `maxBytes` in all, partial files being written included; the least recently used
 *   (by modification time, renewed on every hit) are deleted to make room, while a download is written and
 *   after it is kept. An archive larger than `maxEntryBytes` is streamed without being kept, and so is one
 *   whose partial file would pass the budget with the others being written.
 * - **Only whole archives**: bytes are written to a private partial file while they stream to the buyer and
 *   renamed into place only once the download reached its end, so a broken download is never served from
 *   here. A write that fails (a full disk) stops keeping; it never fails the buyer's download. Partial files a
 *   crashed process left are deleted when a store starts (`sweep`), and by every eviction once their process is
 *   gone.
 * - **Who gets the bytes** is decided by the callers, as for the code host: `CodeHost.archive` hands them out
 *   only for a settled sale of that repository at that commit (a purchase, its receipt, the paying wallet, the
 *   buyer's payment-identifier retry); `CodeHost.cut` keeps them ahead of a sale and hands them to no one. A
 *   private repository is read with the listing's own token, which proves that token could read that commit
 *   then; a taken-down listing sells nothing (its checkout answers 410), so no new buyer reaches its archive,
 *   while receipts of sales already settled may still re-download it from here (the code host would refuse them
 *   once the token is destroyed).
 * - Files are created with mode 0600 in a 0700 directory. The directory is created on the first archive
 *   kept, never at start-up. Several processes may share it (renames are atomic; each evicts by what it finds
 *   on disk).
 */
export class ArchiveDisk {
  /** Where the digest files live: `<dir>-digests`, so the archives' directory holds archives only. */
  private readonly digestDir: string
  readonly maxEntryBytes: number
  private readonly from: ArchiveDisk | null
  /** Bytes of archives kept here as the last scan found them, plus those kept or moved here since. */
  private kept = 0
  /** Bytes this process has reserved for its partial files being written. */
  private writing = 0
  /** The scan running (or the last one), so that two never overlap. */
  private scanning: Promise<void> = Promise.resolve()

  constructor(readonly dir: string, readonly maxBytes: number, private readonly seal: ArchiveSeal, options: ArchiveDiskOptions = {}) {
    this.digestDir = `${dir}-digests`
    this.maxEntryBytes = Math.min(options.maxEntryBytes ?? maxBytes, maxBytes)
    this.from = options.from ?? null
  }

  private pathOf(file: string): string {
    return join(this.dir, file + SEALED_SUFFIX)
  }

  private digestFileOf(file: string, suffix = SEALED_SUFFIX): string {
    return join(this.digestDir, file + suffix + DIGEST_SUFFIX)
  }

  private partOf(file: string): string {
    return join(this.dir, `.${file}.${process.pid}.${randomBytes(6).toString("hex")}${PART_SUFFIX}`)
  }

  private fileOf(ref: RepoRef, commitSha: string): string | undefined {
    if (!isCommitId(commitSha)) return undefined
    return createHash("sha256").update(commitKey(ref, commitSha), "utf8").digest("hex")
  }

  /** The kept archive of `ref` at `commitSha` (moved here from `from` when there), else `download`, kept on its way through when it fits. */
  through(ref: RepoRef, commitSha: string, download: Stream.Stream<Uint8Array, CodeHostError>): Stream.Stream<Uint8Array, CodeHostError> {
    const file = this.fileOf(ref, commitSha)
    if (file === undefined || this.maxBytes <= 0) return download
    return Stream.unwrap(Effect.map(
      Effect.promise(async () => {
        const here = await this.openKept(file)
        if (here !== null || this.from === null) return here
        // Moved here by this call or by a concurrent one: opened here either way.
        await this.from.moveTo(this, file)
        return this.openKept(file)
      }),
      (kept) => kept === null ? this.keeping(file, download) : this.served(file, kept)
    ))
  }

  /**
   * The SHA-256 and size of the kept archive of `ref` at `commitSha`, if one is kept: by this process or another
   * sharing the directory, before a restart or after. Read from the small digest file written beside the archive
   * when it was kept (hashed as its bytes were written), never by hashing the archive itself: the 402 asks for
   * this, and a large archive would cost it seconds. None when nothing is kept, when the digest file is missing
   * or does not describe the archive there (its stored size differs), or when either cannot be read.
   */
  digest(ref: RepoRef, commitSha: string): Effect.Effect<Option.Option<ArchiveDigest>> {
    const file = this.fileOf(ref, commitSha)
    if (file === undefined || this.maxBytes <= 0) return Effect.succeed(Option.none())
    return Effect.promise(async () => {
      const [info, text] = await Promise.all([stat(this.pathOf(file)).catch(() => null), readFile(this.digestFileOf(file), "utf8").catch(() => null)])
      if (info === null || text === null) return Option.none()
      try {
        const json: unknown = JSON.parse(text)
        if (typeof json !== "object" || json === null) return Option.none()
        const { sha256, size, stored } = json as Record<string, unknown>
        const valid = typeof sha256 === "string" && FILE_ID.test(sha256) && Number.isSafeInteger(size) && (size as number) >= 0 && stored === info.size
        return valid ? Option.some({ sha256, size: size as number }) : Option.none()
      } catch {
        return Option.none()
      }
    })
  }

  /** The kept archive's file opened (its header read), renewed as used; null when none is kept, or it cannot be opened (then deleted). */
  private async openKept(file: string): Promise<Kept | null> {
    const path = this.pathOf(file)
    const handle = await open(path, "r").catch(() => null)
    if (handle === null) return null
    const head = Buffer.alloc(MAX_HEADER_BYTES)
    const read = await readFully(handle, head, 0).catch(() => -1)
    const opening = read < 0 ? null : this.seal.open(file, head.subarray(0, read))
    if (opening === null) {
      // Not sealed, or sealed with a key SECRET_KEYS no longer lists: it cannot be served; downloaded again.
      await handle.close().catch(() => undefined)
      await this.discard(file)
      return null
    }
    // Used now: renewed for the eviction order (least recently used first out).
    const now = new Date()
    await utimes(path, now, now).catch(() => undefined)
    return { handle, opening }
  }

  private async discard(file: string): Promise<void> {
    await unlink(this.pathOf(file)).catch(() => undefined)
    await unlink(this.digestFileOf(file)).catch(() => undefined)
  }

  /** A kept archive, opened record by record; one that does not authenticate fails the stream and is deleted. */
  private served(file: string, { handle, opening }: Kept): Stream.Stream<Uint8Array, CodeHostError> {
    let position = opening.headerBytes
    let ended = false
    const next = async (): Promise<Buffer | null> => {
      if (ended) return null
      const record = Buffer.allocUnsafe(RECORD_BYTES)
      const read = await readFully(handle, record, position)
      position += read
      // A full record is never the last (ArchiveSeal.ts): a file that ends after one was cut short.
      if (read === RECORD_BYTES) return opening.open(record, false)
      ended = true
      if (read === 0) throw new Error("the sealed archive ends before its last record")
      const plain = opening.open(record.subarray(0, read), true)
      if ((await readFully(handle, Buffer.alloc(1), position)) !== 0) throw new Error("bytes after the sealed archive's last record")
      return plain.length === 0 ? null : plain
    }
    return Stream.acquireRelease(Effect.succeed(handle), (h) => Effect.promise(() => h.close().catch(() => undefined))).pipe(
      Stream.flatMap(() =>
        Stream.repeatEffectOption(
          Effect.tryPromise({ try: next, catch: () => unreadable() }).pipe(
            Effect.tapError(() => Effect.promise(() => this.discard(file))),
            Effect.mapError(Option.some),
            Effect.flatMap((chunk) => chunk === null ? Effect.fail(Option.none()) : Effect.succeed<Uint8Array>(chunk))
          )
        ))
    )
  }

  /**
   * Reserves `bytes` more of the budget for a partial file: false (nothing reserved) when the partial files being
   * written would pass it alone; otherwise the least recently used archives make room first.
   */
  private async reserve(bytes: number): Promise<boolean> {
    if (this.writing + bytes > this.maxBytes) return false
    this.writing += bytes
    if (this.kept + this.writing > this.maxBytes) await this.evict().catch(() => undefined)
    return true
  }

  /** `download` as it is, its bytes also sealed into a partial file that becomes the kept archive at the end. */
  private keeping(file: string, download: Stream.Stream<Uint8Array, CodeHostError>): Stream.Stream<Uint8Array, CodeHostError> {
    return Stream.suspend(() => {
      const part = this.partOf(file)
      const sealing = this.seal.seal(file)
      const kid = this.seal.kid
      let handle: FileHandle | null = null
      /** Plain bytes written, and bytes of the budget reserved for them sealed. */
      let size = 0
      let reserved = 0
      let keeping = true
      const hash = createHash("sha256")
      const release = () => {
        this.writing -= reserved
        reserved = 0
      }
      const drop = async () => {
        keeping = false
        release()
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
        const stored = sealedSize(kid, size + bytes)
        if (size + bytes > this.maxEntryBytes || stored > this.maxBytes || !(await this.reserve(stored - reserved))) return drop()
        reserved = stored
        try {
          if (handle === null) {
            await mkdir(this.dir, { recursive: true, mode: 0o700 })
            handle = await open(part, "wx", 0o600)
            await handle.write(sealing.header)
          }
          for (const p of parts) {
            hash.update(p)
            for (const record of sealing.push(p)) await handle.write(record)
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
        if (h === null) return release()
        const stored = reserved
        try {
          await h.write(sealing.end())
          await h.close()
          await rename(part, this.pathOf(file))
        } catch {
          await h.close().catch(() => undefined)
          await unlink(part).catch(() => undefined)
          return release()
        }
        release()
        this.kept += stored
        // The digest file: what `digest` answers other processes and later lives with (a failed write leaves none).
        await this.writeDigest(file, { sha256: hash.digest("hex"), size }, stored)
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

  private async writeDigest(file: string, digest: ArchiveDigest, stored: number): Promise<void> {
    await mkdir(this.digestDir, { recursive: true, mode: 0o700 })
      .then(() => writeFile(this.digestFileOf(file), JSON.stringify({ ...digest, stored }), { mode: 0o600 }))
      .catch(() => undefined)
  }

  /**
   * Moves the archive `file` (and its digest file) from here into `target`, renewed as used there, when it fits
   * there: true once moved. For a purchase of a commit an offer cut: from then on it is a purchased archive.
   */
  private async moveTo(target: ArchiveDisk, file: string): Promise<boolean> {
    const info = await stat(this.pathOf(file)).catch(() => null)
    if (info === null || info.size > target.maxEntryBytes) return false
    try {
      await mkdir(target.dir, { recursive: true, mode: 0o700 })
      await mkdir(target.digestDir, { recursive: true, mode: 0o700 })
      await rename(this.digestFileOf(file), target.digestFileOf(file)).catch(() => undefined)
      await rename(this.pathOf(file), target.pathOf(file))
    } catch {
      return false
    }
    this.kept -= info.size
    target.kept += info.size
    const now = new Date()
    await utimes(target.pathOf(file), now, now).catch(() => undefined)
    await target.evict().catch(() => undefined)
    return true
  }

  /**
   * Deletes the least recently used archives until they and the partial files being written fit in `maxBytes`,
   * and partial files whose process is gone (or that are long abandoned). One scan at a time.
   */
  evict(): Promise<void> {
    const run = this.scanning.then(() => this.scan(false))
    this.scanning = run.catch(() => undefined)
    return run
  }

  /**
   * What a store does when it starts, before its first download: deletes the partial files a crashed process left
   * (its own process id's too: this process has written none yet), seals any archive an earlier version kept in
   * the clear, and evicts down to the budget (which may have shrunk).
   */
  sweep(): Promise<void> {
    const run = this.scanning.then(() => this.scan(true))
    this.scanning = run.catch(() => undefined)
    return run
  }

  private async scan(starting: boolean): Promise<void> {
    let names: Array<string>
    try {
      names = await readdir(this.dir)
    } catch {
      this.kept = 0
      return
    }
    const now = Date.now()
    if (starting) {
      for (const name of names) if (name.endsWith(LEGACY_SUFFIX)) await this.sealLegacy(name)
      names = await readdir(this.dir).catch(() => [])
    }
    const kept: Array<{ readonly file: string; readonly size: number; readonly usedAt: number }> = []
    let partsOfOthers = 0
    for (const name of names) {
      const path = join(this.dir, name)
      const info = await stat(path).catch(() => null)
      if (info === null || !info.isFile()) continue
      if (name.endsWith(PART_SUFFIX)) {
        const pid = Number(PART_NAME.exec(name)?.[2] ?? NaN)
        const mine = pid === process.pid
        const abandoned = now - info.mtimeMs > ABANDONED_PART_MS || !Number.isSafeInteger(pid) ||
          (starting ? mine || !isRunning(pid) : !mine && !isRunning(pid))
        if (abandoned) await unlink(path).catch(() => undefined)
        // This process's own count as reserved (`writing`), bytes not yet written too.
        else if (!mine) partsOfOthers += info.size
      } else if (name.endsWith(SEALED_SUFFIX)) {
        kept.push({ file: name.slice(0, -SEALED_SUFFIX.length), size: info.size, usedAt: info.mtimeMs })
      }
    }
    let total = kept.reduce((sum, k) => sum + k.size, 0)
    kept.sort((a, b) => a.usedAt - b.usedAt)
    for (const k of kept) {
      if (total + partsOfOthers + this.writing <= this.maxBytes) break
      await this.discard(k.file)
      total -= k.size
    }
    this.kept = total
  }

  /** Seals an archive an earlier version kept in the clear (keeping when it was last used), and deletes the clear one. */
  private async sealLegacy(name: string): Promise<void> {
    const file = name.slice(0, -LEGACY_SUFFIX.length)
    const legacy = join(this.dir, name)
    try {
      if (!FILE_ID.test(file) || (await stat(this.pathOf(file)).catch(() => null)) !== null) return
      const info = await stat(legacy)
      if (info.size > this.maxEntryBytes) return
      const part = this.partOf(file)
      const sealing = this.seal.seal(file)
      const hash = createHash("sha256")
      let size = 0
      const input = await open(legacy, "r")
      try {
        const output = await open(part, "wx", 0o600)
        try {
          await output.write(sealing.header)
          const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES)
          for (;;) {
            const read = await readFully(input, buffer, size)
            if (read === 0) break
            const chunk = buffer.subarray(0, read)
            hash.update(chunk)
            for (const record of sealing.push(chunk)) await output.write(record)
            size += read
          }
          await output.write(sealing.end())
        } finally {
          await output.close()
        }
        await rename(part, this.pathOf(file))
      } catch {
        await unlink(part).catch(() => undefined)
        return
      } finally {
        await input.close().catch(() => undefined)
      }
      await utimes(this.pathOf(file), info.atime, info.mtime).catch(() => undefined)
      await this.writeDigest(file, { sha256: hash.digest("hex"), size }, sealedSize(this.seal.kid, size))
    } catch {
      // Left as it was found: it is deleted below all the same, never kept in the clear.
    } finally {
      await unlink(legacy).catch(() => undefined)
      await unlink(this.digestFileOf(file, LEGACY_SUFFIX)).catch(() => undefined)
    }
  }
}

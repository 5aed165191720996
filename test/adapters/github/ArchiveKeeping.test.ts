/*
 * How the GitHub adapter keeps archives on disk (ArchiveDisk.ts, ArchiveSeal.ts), tried as someone who wants a paid
 * archive gone or read: offers' cuts (unpaid requests) are kept apart from purchased archives and can never push
 * one out; an offer cuts nothing larger than its bound; partial files count against the budget while written and
 * are deleted at start once their process is gone; every archive on disk is sealed with SECRET_KEYS (no tarball
 * byte in the clear, a tampered or re-keyed file never served); archives an earlier version kept in the clear are
 * sealed at start. Over the fake GitHub (msw), budgets scaled down to a few MiB.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Option, Redacted, Stream } from "effect"
import { http, HttpResponse } from "msw"
import { commitKey, RepoRef } from "../../../domain/Ids.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { CODELOAD, type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { githubHost, HEAD, PRIVATE_TOKEN, serveFakeGithub, tarballBytes } from "./support.js"

const MiB = 1024 * 1024
/** What a private repository's tarball says, many times over: it must never be readable on disk. */
const MARKER = "TOP-SECRET-MARKER-7f3a"
const secretTarball = (size: number) => {
  const bytes = Buffer.alloc(size)
  for (let at = 0; at < size; at += 4096) bytes.write(MARKER, at, "utf8")
  return new Uint8Array(bytes)
}
const PRIVATE: GhRepo = { owner: "Octo-Org", name: "secret-sauce", private: true, token: PRIVATE_TOKEN, sha: HEAD, tarball: secretTarball(1.5 * MiB) }
/** Archives of about 1 MiB each (each its own size). */
const OTHERS = ["one", "two", "three", "four", "five"].map((name): GhRepo => ({ owner: "Mallory", name, sha: HEAD, tarball: tarballBytes(MiB + name.length) }))
const LARGE: GhRepo = { owner: "Mallory", name: "large", sha: HEAD, tarball: tarballBytes(3 * MiB) }
const gh = makeFakeGithub([PRIVATE, LARGE, ...OTHERS])
const { dataDir: freshDir } = serveFakeGithub(gh, { dirPrefix: "repomarket-keeping-" })

const key = (fill: number) => Buffer.alloc(32, fill).toString("base64")
const KEYS = `k1:${key(1)}`

/** The adapter over `dir`: memory keeping off (only the disk keeps), purchased archives `paid` bytes, offers' cuts `offers` bytes. */
const adapter = (dir: string, paid: number, offers: number, keys = KEYS) =>
  githubHost({ archiveCacheEntryBytes: 0 }, { DATA_DIR: dir, ARCHIVE_CACHE_BYTES: String(paid), ARCHIVE_OFFER_BYTES: String(offers), SECRET_KEYS: keys })

const refOf = (repo: GhRepo) => new RepoRef({ owner: repo.owner, name: repo.name })
const token = Option.some(Redacted.make(PRIVATE_TOKEN))
const none = Option.none<Redacted.Redacted<string>>()
const read = (repo: GhRepo, auth = none) =>
  Effect.flatMap(CodeHost, (host) => Stream.runCollect(host.archive(refOf(repo), HEAD, auth))).pipe(
    Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks)))
  )
const offerCut = (repo: GhRepo) => Effect.flatMap(CodeHost, (host) => host.cut(refOf(repo), HEAD, none, "offer"))
const downloads = (repo: GhRepo) => gh.calls.filter((c) => c.url.pathname.startsWith(`/${repo.owner}/${repo.name}/legacy.tar.gz`)).length
const digestOf = (bytes: Uint8Array) => ({ sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length })
/** The file name an archive is kept under. */
const fileOf = (repo: GhRepo) => createHash("sha256").update(commitKey(refOf(repo), HEAD), "utf8").digest("hex")
/** Every file under a directory (none when it does not exist), with its size. */
const filesIn = (dir: string): Array<{ readonly name: string; readonly size: number }> =>
  existsSync(dir) ? readdirSync(dir).map((name) => ({ name, size: statSync(join(dir, name)).size })) : []
const bytesIn = (dir: string) => filesIn(dir).reduce((sum, f) => sum + f.size, 0)
/** A real pause (the test clock would not move file times). */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

describe("purchased archives and offers' cuts are kept apart", () => {
  it.live("a purchased archive of a taken-down private listing is never pushed out by offers' cuts, however many; only by other purchases", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* Effect.provide(Effect.gen(function*() {
        // Bought: read with the seller's token, then (token destroyed by the takedown) without it: from disk.
        const bought = yield* read(PRIVATE, token)
        expect((yield* read(PRIVATE)).equals(bought)).toBe(true)
        // An attacker makes the server cut five other archives for offers (page views, 402s), 5 MiB in all.
        for (const other of OTHERS) {
          yield* pause
          expect(yield* offerCut(other)).toEqual(Option.some(digestOf(other.tarball!)))
        }
        expect(OTHERS.map(downloads)).toEqual([1, 1, 1, 1, 1])
        // The purchased archive is still there: served without GitHub (which would refuse it now).
        expect((yield* read(PRIVATE)).equals(Buffer.from(PRIVATE.tarball!))).toBe(true)
        expect(downloads(PRIVATE)).toBe(1)
        // The offers' cuts stayed within their own budget: the first one made room for the fifth.
        expect(bytesIn(join(dir, "archives-offers"))).toBeLessThanOrEqual(4.5 * MiB)
        expect(filesIn(join(dir, "archives-offers")).map((f) => f.name)).not.toContain(`${fileOf(OTHERS[0]!)}.sealed`)
        expect(filesIn(join(dir, "archives")).map((f) => f.name)).toEqual([`${fileOf(PRIVATE)}.sealed`])
      }), adapter(dir, 2 * MiB, 4.5 * MiB))
    }))

  it.live("an archive an offer cut is moved in with the purchased ones by its first sale, not downloaded again; other purchases then push out the least recently used", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const [one, two, three] = OTHERS as [GhRepo, GhRepo, GhRepo]
      yield* Effect.provide(Effect.gen(function*() {
        expect(yield* offerCut(one)).toEqual(Option.some(digestOf(one.tarball!)))
        expect(filesIn(join(dir, "archives-offers")).map((f) => f.name)).toEqual([`${fileOf(one)}.sealed`])
        expect((yield* read(one)).equals(Buffer.from(one.tarball!))).toBe(true)
        expect(downloads(one)).toBe(1)
        expect(filesIn(join(dir, "archives-offers"))).toEqual([])
        expect(filesIn(join(dir, "archives")).map((f) => f.name)).toEqual([`${fileOf(one)}.sealed`])
        yield* pause
        yield* read(two)
        yield* pause
        yield* read(three) // room for two purchases: the first goes
        yield* read(one)
        expect([downloads(one), downloads(two), downloads(three)]).toEqual([2, 1, 1])
      }), adapter(dir, 2.5 * MiB, 4.5 * MiB))
    }))

  // An archive larger than an offer may cut: CodeHostGithubCut.test.ts (a real socket; msw cannot cancel a body).
  it.effect("with ARCHIVE_OFFER_BYTES 0, or ARCHIVE_CACHE_BYTES 0, offers cut nothing and download nothing", () =>
    Effect.gen(function*() {
      for (const [paid, offers] of [[16 * MiB, 0], [0, 16 * MiB]] as const) {
        const dir = freshDir()
        expect(yield* Effect.provide(offerCut(PRIVATE), adapter(dir, paid, offers))).toEqual(Option.none())
        expect(readdirSync(dir)).toEqual([])
      }
      expect(downloads(PRIVATE)).toBe(0)
    }))
})

describe("partial files", () => {
  it.effect("left by a crashed process (or by this process id's last life) are deleted when the store starts; a running process's stay", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const archives = join(dir, "archives")
      mkdirSync(archives, { recursive: true, mode: 0o700 })
      const dead = spawnSync(process.execPath, ["-e", ""]).pid
      const crashed = `.${"a".repeat(64)}.${dead}.0123456789ab.part`
      const ours = `.${"b".repeat(64)}.${process.pid}.0123456789ab.part`
      const running = `.${"c".repeat(64)}.${process.ppid}.0123456789ab.part`
      for (const name of [crashed, ours, running]) writeFileSync(join(archives, name), Buffer.alloc(MiB, 1))
      yield* Effect.provide(Effect.flatMap(CodeHost, (host) => host.archiveDigest(refOf(PRIVATE), HEAD)), adapter(dir, 4 * MiB, 4 * MiB))
      expect(readdirSync(archives)).toEqual([running])
    }))

  it.live("count against the budget while they are written: purchased archives make room before the download ends", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const archives = join(dir, "archives")
      const [one, two] = OTHERS as [GhRepo, GhRepo]
      const halfway = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      // LARGE's download sends 2 MiB, then waits.
      gh.server.use(http.get(`${CODELOAD}/Mallory/large/legacy.tar.gz/:ref`, () =>
        new HttpResponse(
          new ReadableStream({
            async start(controller) {
              for (let at = 0; at < 2 * MiB; at += 256 * 1024) controller.enqueue(LARGE.tarball!.subarray(at, at + 256 * 1024))
              Effect.runSync(Deferred.succeed(halfway, undefined))
              await Effect.runPromise(Deferred.await(finish))
              controller.enqueue(LARGE.tarball!.subarray(2 * MiB))
              controller.close()
            }
          }),
          { headers: { "content-type": "application/x-gzip" } }
        ), { once: true }))
      yield* Effect.provide(Effect.gen(function*() {
        yield* read(one)
        yield* pause
        yield* read(two)
        expect(bytesIn(archives)).toBeGreaterThan(2 * MiB)
        const reading = yield* Effect.fork(read(LARGE))
        yield* Deferred.await(halfway)
        // Until the partial file holds what was sent, the budget holds with it.
        for (let i = 0; i < 200 && !filesIn(archives).some((f) => f.name.endsWith(".part") && f.size >= 2 * MiB); i++) yield* pause
        const during = filesIn(archives)
        expect(during.some((f) => f.name.endsWith(".part") && f.size >= 2 * MiB)).toBe(true)
        expect(bytesIn(archives)).toBeLessThanOrEqual(3.5 * MiB)
        expect(during.map((f) => f.name)).not.toContain(`${fileOf(one)}.sealed`)
        yield* Deferred.succeed(finish, undefined)
        expect((yield* Fiber.join(reading)).equals(Buffer.from(LARGE.tarball!))).toBe(true)
        expect(filesIn(archives).map((f) => f.name)).toEqual([`${fileOf(LARGE)}.sealed`])
        expect(bytesIn(archives)).toBeLessThanOrEqual(3.5 * MiB)
      }), adapter(dir, 3.5 * MiB, 4 * MiB))
    }))
})

describe("archives on disk are sealed with SECRET_KEYS", () => {
  it.effect("a private repository's archive is nowhere on disk in the clear, neither the archive nor its digest file, nor while it was cut for an offer", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* Effect.provide(Effect.gen(function*() {
        const host = yield* CodeHost
        expect(yield* host.cut(refOf(PRIVATE), HEAD, token, "offer")).toEqual(Option.some(digestOf(PRIVATE.tarball!)))
        const offered = readFileSync(join(dir, "archives-offers", `${fileOf(PRIVATE)}.sealed`))
        expect(offered.includes(MARKER)).toBe(false)
        expect((yield* read(PRIVATE, token)).equals(Buffer.from(PRIVATE.tarball!))).toBe(true)
      }), adapter(dir, 16 * MiB, 16 * MiB))
      const kept = readFileSync(join(dir, "archives", `${fileOf(PRIVATE)}.sealed`))
      expect(kept.length).toBeGreaterThan(PRIVATE.tarball!.length)
      expect(kept.includes(MARKER)).toBe(false)
      expect(kept.includes(Buffer.from(PRIVATE.tarball!.subarray(0, 64)))).toBe(false)
      for (const sub of ["archives", "archives-digests", "archives-offers", "archives-offers-digests"]) {
        for (const f of filesIn(join(dir, sub))) expect(readFileSync(join(dir, sub, f.name)).includes(MARKER)).toBe(false)
      }
      expect(downloads(PRIVATE)).toBe(1)
    }))

  it.effect("a rotated key ring still opens it (the old key listed after the new); a ring without its key never serves it: downloaded again", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* Effect.provide(read(PRIVATE, token), adapter(dir, 16 * MiB, 0))
      const rotated = adapter(dir, 16 * MiB, 0, `k2:${key(2)},k1:${key(1)}`)
      expect((yield* Effect.provide(read(PRIVATE), rotated)).equals(Buffer.from(PRIVATE.tarball!))).toBe(true)
      expect(downloads(PRIVATE)).toBe(1)
      // The old key removed: without the seller's token (a taken-down listing) it is gone, never served garbled.
      const removed = adapter(dir, 16 * MiB, 0, `k2:${key(2)}`)
      expect(Exit.isFailure(yield* Effect.exit(Effect.provide(read(PRIVATE), removed)))).toBe(true)
      expect((yield* Effect.provide(read(PRIVATE, token), removed)).equals(Buffer.from(PRIVATE.tarball!))).toBe(true)
      expect(downloads(PRIVATE)).toBe(2)
    }))

  it.effect("a file changed on disk (one byte, a record dropped, another commit's file put in its place) is never served: the read fails, the file is deleted, the next read downloads it again", () =>
    Effect.gen(function*() {
      const [one, two] = OTHERS as [GhRepo, GhRepo]
      const tamperings: ReadonlyArray<(path: string, archives: string) => void> = [
        (path) => {
          const bytes = readFileSync(path)
          bytes[bytes.length >> 1]! ^= 1
          writeFileSync(path, bytes)
        },
        (path) => {
          const bytes = readFileSync(path)
          writeFileSync(path, Buffer.concat([bytes.subarray(0, 200), bytes.subarray(200 + 65_552)]))
        },
        (path) => writeFileSync(path, readFileSync(path).subarray(0, -100)),
        (path, archives) => writeFileSync(path, readFileSync(join(archives, `${fileOf(two)}.sealed`)))
      ]
      for (const tamper of tamperings) {
        const dir = freshDir()
        const layer = adapter(dir, 16 * MiB, 0)
        yield* Effect.provide(Effect.zipRight(read(one), read(two)), layer)
        const archives = join(dir, "archives")
        tamper(join(archives, `${fileOf(one)}.sealed`), archives)
        gh.reset()
        yield* Effect.provide(Effect.gen(function*() {
          expect(Exit.isFailure(yield* Effect.exit(read(one)))).toBe(true)
          expect(existsSync(join(archives, `${fileOf(one)}.sealed`))).toBe(false)
          expect((yield* read(one)).equals(Buffer.from(one.tarball!))).toBe(true)
          expect(downloads(one)).toBe(1)
        }), layer)
      }
    }))

  it.effect("archives an earlier version kept in the clear are sealed at start (their digest known, no download), and the clear copies deleted", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const archives = join(dir, "archives")
      mkdirSync(archives, { recursive: true, mode: 0o700 })
      mkdirSync(`${archives}-digests`, { recursive: true, mode: 0o700 })
      writeFileSync(join(archives, `${fileOf(PRIVATE)}.tar.gz`), PRIVATE.tarball!, { mode: 0o600 })
      writeFileSync(join(`${archives}-digests`, `${fileOf(PRIVATE)}.tar.gz.sha256.json`), JSON.stringify(digestOf(PRIVATE.tarball!)))
      yield* Effect.provide(Effect.gen(function*() {
        const host = yield* CodeHost
        expect(readdirSync(archives)).toEqual([`${fileOf(PRIVATE)}.sealed`])
        expect(readdirSync(`${archives}-digests`)).toEqual([`${fileOf(PRIVATE)}.sealed.sha256.json`])
        expect(readFileSync(join(archives, `${fileOf(PRIVATE)}.sealed`)).includes(MARKER)).toBe(false)
        expect(yield* host.archiveDigest(refOf(PRIVATE), HEAD)).toEqual(Option.some(digestOf(PRIVATE.tarball!)))
        expect((yield* read(PRIVATE)).equals(Buffer.from(PRIVATE.tarball!))).toBe(true)
      }), adapter(dir, 16 * MiB, 0))
      expect(downloads(PRIVATE)).toBe(0)
    }))
})

/*
 * Purchased archives kept on disk (ArchiveDisk.ts) by the GitHub adapter, over the fake GitHub (msw): one
 * download per commit, whatever the credential; within ARCHIVE_CACHE_BYTES, least recently used first out;
 * only whole archives kept; named by a digest, never by the repository or a token.
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Option, Redacted, Stream } from "effect"
import { http, HttpResponse } from "msw"
import { RepoRef } from "../../../domain/Ids.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { CODELOAD, makeFakeGithub } from "./FakeGithub.js"
import { githubHost, HEAD, PRIVATE_TOKEN, SECRET, serveFakeGithub, tarballBytes } from "./support.js"

const SIZE = 100_000
/** The server's keys (archives on disk are sealed with them). */
const SECRET_KEYS = `disk1:${Buffer.alloc(32, 7).toString("base64")}`
const PUBLIC = { owner: "Octo-Org", name: "disk-thing", sha: HEAD, tarball: tarballBytes(SIZE) }
const gh = makeFakeGithub([PUBLIC, SECRET])
const { dataDir } = serveFakeGithub(gh, { dirPrefix: "repomarket-archives-" })

/** The adapter with memory keeping off (so only the disk keeps) and `bytes` of disk under a fresh DATA_DIR. */
const onDisk = (bytes: number) => {
  const dir = dataDir()
  return { dir, layer: githubHost({ archiveCacheEntryBytes: 0 }, { DATA_DIR: dir, ARCHIVE_CACHE_BYTES: String(bytes), SECRET_KEYS }) }
}

const publicRef = new RepoRef({ owner: "octo-org", name: "disk-thing" })
const sauce = new RepoRef({ owner: "octo-org", name: "secret-sauce" })
const none = Option.none<Redacted.Redacted<string>>()
const read = (ref: RepoRef, sha: string, token = none) =>
  Effect.flatMap(CodeHost, (host) => Stream.runCollect(host.archive(ref, sha, token))).pipe(
    Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks)))
  )
const downloads = (sha?: string) => gh.calls.filter((c) => c.url.pathname.includes("/tarball/") && (sha === undefined || c.url.pathname.endsWith(sha))).length
/** A real pause (the test clock would not move file times). */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
const shas = ["1", "2", "3", "4"].map((d) => HEAD.replace(/^0/, d))

describe("CodeHostGithub: archives kept on disk", () => {
  it.effect("a commit's archive is downloaded once, any size, and read back whole; a private one after its token is gone too", () =>
    Effect.gen(function*() {
      const { dir, layer } = onDisk(10 * SIZE)
      yield* Effect.provide(Effect.gen(function*() {
        const first = yield* read(publicRef, HEAD)
        expect(first.equals(Buffer.from(PUBLIC.tarball))).toBe(true)
        for (let i = 0; i < 5; i++) expect((yield* read(new RepoRef({ owner: "OCTO-ORG", name: "Disk-Thing" }), HEAD)).equals(first)).toBe(true)
        expect(downloads()).toBe(1)
        // A private archive read with the seller's token; then without it (the listing was taken down): the
        // settled sale's receipt is answered from disk.
        const secret = yield* read(sauce, HEAD, Option.some(Redacted.make(PRIVATE_TOKEN)))
        expect((yield* read(sauce, HEAD)).equals(secret)).toBe(true)
        expect(downloads()).toBe(2)
        // A branch name is no commit: never kept.
        yield* read(publicRef, "main").pipe(Effect.ignore)
        yield* read(publicRef, "main").pipe(Effect.ignore)
        expect(downloads("main")).toBe(2)
      }), layer)
      const files = readdirSync(join(dir, "archives"))
      expect(files).toHaveLength(2)
      expect(files.every((f) => /^[0-9a-f]{64}\.sealed$/.test(f))).toBe(true)
      expect(statSync(join(dir, "archives")).mode & 0o777).toBe(0o700)
      expect(statSync(join(dir, "archives", files[0]!)).mode & 0o777).toBe(0o600)
    }))

  it.effect("another process sharing the DATA_DIR (or this one after a restart) knows the kept archive's digest without a download", () =>
    Effect.gen(function*() {
      const { dir, layer } = onDisk(10 * SIZE)
      const first = yield* Effect.provide(read(publicRef, HEAD), layer)
      const digest = { sha256: createHash("sha256").update(first).digest("hex"), size: first.length }
      const calls = gh.calls.length
      // A second adapter over the same directory: a cluster's other worker, or the server after a restart.
      const other = githubHost({ archiveCacheEntryBytes: 0 }, { DATA_DIR: dir, ARCHIVE_CACHE_BYTES: String(10 * SIZE), SECRET_KEYS })
      yield* Effect.provide(Effect.gen(function*() {
        const host = yield* CodeHost
        expect(yield* host.archiveDigest(new RepoRef({ owner: "Octo-Org", name: "Disk-Thing" }), HEAD)).toEqual(Option.some(digest))
        expect(yield* host.archiveDigest(publicRef, HEAD.replace(/^0/, "9"))).toEqual(Option.none())
        expect(yield* host.archiveDigest(publicRef, "main")).toEqual(Option.none())
        expect(gh.calls.length).toBe(calls)
        // Read from the digest file written when the archive was kept (beside the archives' directory, private).
        expect(readdirSync(join(dir, "archives-digests"))).toEqual([`${readdirSync(join(dir, "archives"))[0]}.sha256.json`])
        expect(statSync(join(dir, "archives-digests")).mode & 0o777).toBe(0o700)
        // The bytes it then serves are the kept ones, checked against that digest.
        expect((yield* read(publicRef, HEAD)).equals(first)).toBe(true)
      }), other)
      expect(downloads()).toBe(1)
    }))

  it.live("within ARCHIVE_CACHE_BYTES: the least recently used archive is deleted to make room", () =>
    Effect.gen(function*() {
      const { layer } = onDisk(2 * SIZE + SIZE / 2)
      yield* Effect.provide(Effect.gen(function*() {
        const [a, b, c] = shas as [string, string, string]
        yield* read(publicRef, a)
        // Distinct modification times, so "least recently used" is unambiguous.
        yield* pause
        yield* read(publicRef, b)
        yield* pause
        yield* read(publicRef, a) // a is used again: b is now the least recently used
        yield* pause
        yield* read(publicRef, c) // room for two: b goes
        expect([downloads(a), downloads(b), downloads(c)]).toEqual([1, 1, 1])
        yield* read(publicRef, a)
        yield* read(publicRef, c)
        expect([downloads(a), downloads(c)]).toEqual([1, 1])
        yield* read(publicRef, b)
        expect(downloads(b)).toBe(2)
      }), layer)
    }))

  it.effect("an archive larger than the whole budget streams through and is not kept; with 0 nothing is kept", () =>
    Effect.gen(function*() {
      const small = onDisk(SIZE - 1)
      yield* Effect.provide(Effect.zipRight(read(publicRef, HEAD), read(publicRef, HEAD)), small.layer)
      expect(downloads()).toBe(2)
      expect(readdirSync(small.dir)).toEqual([])
      const off = onDisk(0)
      yield* Effect.provide(Effect.zipRight(read(publicRef, HEAD), read(publicRef, HEAD)), off.layer)
      expect(downloads()).toBe(4)
      expect(readdirSync(off.dir)).toEqual([])
    }))

  it.effect("a download that breaks off is never kept, and leaves no partial file", () =>
    Effect.gen(function*() {
      const { dir, layer } = onDisk(10 * SIZE)
      gh.server.use(http.get(`${CODELOAD}/:owner/:repo/legacy.tar.gz/:ref`, () =>
        new HttpResponse(
          new ReadableStream({
            start(controller) {
              controller.enqueue(PUBLIC.tarball.subarray(0, 8))
              controller.error(new Error("connection reset"))
            }
          }),
          { headers: { "content-type": "application/x-gzip" } }
        ), { once: true }))
      yield* Effect.provide(Effect.gen(function*() {
        expect(Exit.isFailure(yield* Effect.exit(read(publicRef, HEAD)))).toBe(true)
        const archives = join(dir, "archives")
        expect(existsSync(archives) ? readdirSync(archives) : []).toEqual([])
        expect((yield* read(publicRef, HEAD)).equals(Buffer.from(PUBLIC.tarball))).toBe(true)
        yield* read(publicRef, HEAD)
        expect(downloads()).toBe(2)
      }), layer)
    }))
})

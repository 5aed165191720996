/*
 * CodeHost.cut over GitHub, for an archive larger than the adapter keeps, against a fake GitHub on a real socket
 * (msw's intercepted bodies cannot be cancelled mid-stream): the cut answers none once past what the adapter
 * keeps and closes the download there, instead of reading an archive it would not keep to its end. An offer's cut
 * (an unpaid request) stops at a quarter of ARCHIVE_OFFER_BYTES, whatever the purchased archives' budget.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"
import { CodeHostGithubWith } from "../../../adapters/github/CodeHostGithub.js"
import { RepoRef } from "../../../domain/Ids.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { endlessTarball, FAKE_HEAD_SHA, startFakeGithubServer } from "../../support/fakeGithubServer.js"
import { configOf, FAST, tarballBytes } from "./support.js"

/** The archive: endless bytes, counted, and whether the server's side of the download was closed. */
const { tarball: endless, upstream } = endlessTarball(16 * 1024)

const MiB = 1024 * 1024
/** 3 MiB: more than an offer may cut with ARCHIVE_OFFER_BYTES at 4 MiB, well within the purchased archives' 16 MiB. */
const BIG = tarballBytes(3 * MiB)
const github = await startFakeGithubServer([
  { owner: "Octo-Org", name: "Huge", files: { "README.md": "# Huge\n" }, tarball: endless },
  { owner: "Octo-Org", name: "Big", files: { "README.md": "# Big\n" }, tarball: () => Readable.from([Buffer.from(BIG)]) }
])
const dataDir = mkdtempSync(join(tmpdir(), "repomarket-offer-cuts-"))
afterAll(async () => {
  await github.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const KEEPS = 256 * 1024
const host = CodeHostGithubWith({ ...FAST, archiveCacheEntryBytes: KEEPS, archiveCacheBytes: 4 * KEEPS }).pipe(
  Layer.provide(configOf({ GITHUB_API_URL: github.url }))
)

describe("CodeHostGithub: cut of an archive larger than it keeps", () => {
  it.live("is none, the download closed soon past that size; nothing is recorded", () =>
    Effect.gen(function*() {
      const codeHost = yield* CodeHost
      const huge = new RepoRef({ owner: "Octo-Org", name: "Huge" })
      expect(yield* codeHost.cut(huge, FAKE_HEAD_SHA, Option.none(), "paid")).toEqual(Option.none())
      for (const until = Date.now() + 5_000; upstream.closedAt === null && Date.now() < until;) yield* Effect.sleep("20 millis")
      expect(upstream.closedAt, `the download was still open (${upstream.sent} bytes sent)`).not.toBeNull()
      // Past the size by at most what sockets buffer on the way, never an archive read to no end.
      expect(upstream.sent).toBeGreaterThan(KEEPS)
      expect(upstream.sent).toBeLessThan(KEEPS + 16 * 1024 * 1024)
      expect(yield* codeHost.archiveDigest(huge, FAKE_HEAD_SHA)).toEqual(Option.none())
    }).pipe(Effect.provide(host)), 20_000)
})

describe("CodeHostGithub: an offer's cut of an archive larger than an offer may cut", () => {
  const keeping = CodeHostGithubWith({ ...FAST, archiveCacheEntryBytes: 0 }).pipe(
    Layer.provide(configOf({
      GITHUB_API_URL: github.url,
      DATA_DIR: dataDir,
      ARCHIVE_CACHE_BYTES: String(16 * MiB),
      ARCHIVE_OFFER_BYTES: String(4 * MiB),
      SECRET_KEYS: `k1:${Buffer.alloc(32, 9).toString("base64")}`
    }))
  )
  const big = new RepoRef({ owner: "Octo-Org", name: "Big" })
  const bigDownloads = () => github.calls.filter((c) => c.path.startsWith("/codeload/Octo-Org/Big/")).length

  it.live("is none past a quarter of ARCHIVE_OFFER_BYTES, the download closed soon after, nothing kept; a delivery's cut of it keeps it", () =>
    Effect.gen(function*() {
      const codeHost = yield* CodeHost
      const huge = new RepoRef({ owner: "Octo-Org", name: "Huge" })
      expect(yield* codeHost.cut(huge, FAKE_HEAD_SHA, Option.none(), "offer")).toEqual(Option.none())
      for (const until = Date.now() + 5_000; upstream.closedAt === null && Date.now() < until;) yield* Effect.sleep("20 millis")
      expect(upstream.closedAt, `the download was still open (${upstream.sent} bytes sent)`).not.toBeNull()
      expect(upstream.sent).toBeGreaterThan(MiB)
      expect(upstream.sent).toBeLessThan(MiB + 16 * MiB)

      expect(yield* codeHost.cut(big, FAKE_HEAD_SHA, Option.none(), "offer")).toEqual(Option.none())
      expect(yield* codeHost.archiveDigest(big, FAKE_HEAD_SHA)).toEqual(Option.none())
      // Nothing kept for offers, not even a partial file.
      for (let i = 0; i < 100 && readdirSync(join(dataDir, "archives-offers")).length > 0; i++) yield* Effect.sleep("20 millis")
      expect(readdirSync(join(dataDir, "archives-offers"))).toEqual([])
      // Its first sale: the delivery's cut reads it whole and keeps it with the purchased archives.
      const digest = { sha256: createHash("sha256").update(BIG).digest("hex"), size: BIG.length }
      expect(yield* codeHost.cut(big, FAKE_HEAD_SHA, Option.none(), "paid")).toEqual(Option.some(digest))
      expect(readdirSync(join(dataDir, "archives"))).toHaveLength(1)
      expect(bigDownloads()).toBe(2)
    }).pipe(Effect.provide(keeping)), 20_000)
})

/*
 * CodeHost.cut over GitHub, for an archive larger than the adapter keeps, against a fake GitHub on a real socket
 * (msw's intercepted bodies cannot be cancelled mid-stream): the cut answers none once past what the adapter
 * keeps and closes the download there, instead of reading an archive it would not keep to its end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { afterAll } from "vitest"
import { CodeHostGithubWith } from "../../../adapters/github/CodeHostGithub.js"
import { RepoRef } from "../../../model/Ids.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { endlessTarball, FAKE_HEAD_SHA, startFakeGithubServer } from "../../support/fakeGithubServer.js"
import { configOf, FAST } from "./support.js"

/** The archive: endless bytes, counted, and whether the server's side of the download was closed. */
const { tarball: endless, upstream } = endlessTarball(16 * 1024)

const github = await startFakeGithubServer([{ owner: "Octo-Org", name: "Huge", files: { "README.md": "# Huge\n" }, tarball: endless }])
afterAll(() => github.close())

const KEEPS = 256 * 1024
const host = CodeHostGithubWith({ ...FAST, archiveCacheEntryBytes: KEEPS, archiveCacheBytes: 4 * KEEPS }).pipe(
  Layer.provide(configOf({ GITHUB_API_URL: github.url }))
)

describe("CodeHostGithub: cut of an archive larger than it keeps", () => {
  it.live("is none, the download closed soon past that size; nothing is recorded", () =>
    Effect.gen(function*() {
      const codeHost = yield* CodeHost
      const huge = new RepoRef({ owner: "Octo-Org", name: "Huge" })
      expect(yield* codeHost.cut(huge, FAKE_HEAD_SHA, Option.none())).toEqual(Option.none())
      for (const until = Date.now() + 5_000; upstream.closedAt === null && Date.now() < until;) yield* Effect.sleep("20 millis")
      expect(upstream.closedAt, `the download was still open (${upstream.sent} bytes sent)`).not.toBeNull()
      // Past the size by at most what sockets buffer on the way, never an archive read to no end.
      expect(upstream.sent).toBeGreaterThan(KEEPS)
      expect(upstream.sent).toBeLessThan(KEEPS + 16 * 1024 * 1024)
      expect(yield* codeHost.archiveDigest(huge, FAKE_HEAD_SHA)).toEqual(Option.none())
    }).pipe(Effect.provide(host)), 20_000)
})

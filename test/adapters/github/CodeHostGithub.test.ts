import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { http, HttpResponse } from "msw"
import { Chunk, Effect, Exit, Fiber, Layer, Logger, Option, Redacted, Stream, TestClock } from "effect"
import { RepoRef } from "../../../domain/Ids.js"
import { CodeHost, type CodeHostError, wholeArchiveBytes } from "../../../ports/CodeHost.js"
import { ReadmePackagesModule } from "../../../adapters/LazyModules.js"
import { API, CODELOAD, makeFakeGithub } from "./FakeGithub.js"
import {
  ARCHIVED,
  FORK,
  FREE,
  githubHost,
  HEAD,
  OTHER,
  OTHER_TOKEN,
  PRIVATE_TOKEN,
  SECRET,
  serveFakeGithub,
  WIDGET
} from "./support.js"

const gh = makeFakeGithub([WIDGET, SECRET, OTHER, FORK, ARCHIVED, FREE])
const { dataDir } = serveFakeGithub(gh, { dirPrefix: "repomarket-cuts-" })

/** An adapter that keeps archives on disk, offers' cuts too, under a fresh DATA_DIR. */
const offerKeeping = () => githubHost({}, { DATA_DIR: dataDir(), ARCHIVE_CACHE_BYTES: String(16 * 1024 * 1024) })

const none = Option.none<Redacted.Redacted<string>>()
const token = (value: string) => Option.some(Redacted.make(value))
const widget = { owner: "octo-org", name: "widget" }
const secret = { owner: "Octo-Org", name: "Secret-Sauce" }

/** Runs with a fresh adapter, so every test starts with an empty cache. */
const withHost = <A, E>(effect: Effect.Effect<A, E, CodeHost>, layer: Layer.Layer<CodeHost, unknown> = githubHost()) =>
  Effect.provide(effect, layer)

const failureOf = <A>(effect: Effect.Effect<A, CodeHostError, CodeHost>) =>
  withHost(Effect.flip(effect))

describe("CodeHostGithub: repositories", () => {
  it.effect("reads a public repo anonymously, in the host's canonical case, with its head commit", () =>
    withHost(Effect.gen(function*() {
      const info = yield* Effect.flatMap(CodeHost, (h) => h.repo(widget, none))
      expect(info.ref).toEqual(new RepoRef({ owner: "Octo-Org", name: "Widget" }))
      expect(info).toMatchObject({
        htmlUrl: "https://github.com/Octo-Org/Widget",
        isPrivate: false,
        defaultBranch: "main",
        headSha: HEAD,
        description: "A widget library",
        language: "TypeScript",
        stars: 42,
        topics: ["library", "typescript"],
        license: "MIT"
      })
      expect(gh.calls.map((c) => [c.url.pathname, c.authorization])).toEqual([
        ["/repos/octo-org/widget", null],
        ["/repos/Octo-Org/Widget/commits/main", null]
      ])
    })))

  it.effect("uses the server's GITHUB_TOKEN for public reads when it is set", () =>
    withHost(
      Effect.gen(function*() {
        yield* Effect.flatMap(CodeHost, (h) => h.repo(widget, none))
        expect(gh.calls.map((c) => c.authorization)).toEqual(["Bearer server-token", "Bearer server-token"])
      }),
      githubHost({}, { GITHUB_TOKEN: "server-token" })
    ))

  it.effect("never lets the server's GITHUB_TOKEN stand in for a seller's token on a private repo", () =>
    Effect.gen(function*() {
      gh.put({ owner: "operator", name: "internal", private: true, token: "server-token", sha: HEAD })
      const e = yield* withHost(
        Effect.flip(Effect.flatMap(CodeHost, (h) => h.repo({ owner: "operator", name: "internal" }, none))),
        githubHost({}, { GITHUB_TOKEN: "server-token" })
      )
      expect(e.reason).toBe("repo_not_found")
      // GitHub did show it to the server token: the adapter refused it.
      expect(gh.calls.map((c) => c.status)).toEqual([200])
    }))

  it.effect("reads a private repo with its token, sent only as an Authorization header to the API", () =>
    withHost(Effect.gen(function*() {
      const info = yield* Effect.flatMap(CodeHost, (h) => h.repo(secret, token(PRIVATE_TOKEN)))
      expect(info.ref.slug).toBe("Octo-Org/secret-sauce")
      expect(info.isPrivate).toBe(true)
      // NOASSERTION is GitHub's "a license we could not identify": no identifier.
      expect(info.license).toBeNull()
      for (const call of gh.calls) {
        expect(call.url.origin).toBe(API)
        expect(call.authorization).toBe(`Bearer ${PRIVATE_TOKEN}`)
        expect(call.url.search).not.toContain(PRIVATE_TOKEN)
      }
    })))

  it.effect("a private repo without a token is missing-or-private (GitHub answers 404 anonymously)", () =>
    Effect.gen(function*() {
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(secret, none)))
      expect(e.reason).toBe("repo_not_found")
      expect(e.message).toContain("missing or private (add host_pat)")
    }))

  it.effect("a bad token is token_rejected (401), and the message never holds the token", () =>
    Effect.gen(function*() {
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(secret, token("github_pat_wrong_123"))))
      expect(e.reason).toBe("token_rejected")
      expect(JSON.stringify(e)).not.toContain("github_pat_wrong_123")
    }))

  it.effect("a valid token without access to the repo is token_lacks_access (404 with a token)", () =>
    Effect.gen(function*() {
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(secret, token(OTHER_TOKEN))))
      expect(e.reason).toBe("token_lacks_access")
    }))

  it.effect("a missing repo is repo_not_found", () =>
    Effect.gen(function*() {
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo({ owner: "octo-org", name: "nope" }, none)))
      expect(e.reason).toBe("repo_not_found")
    }))

  it.effect("a primary rate limit (403, x-ratelimit-remaining: 0) fails at once with the wait until the reset", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      gh.setRateLimited({ resetEpochSeconds: 1_700_000_000 + 120 })
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(e.reason).toBe("rate_limited")
      expect(e.retryAfterSeconds).toBe(120)
      // Failed fast: one request, no retry, no waiting out the window.
      expect(gh.calls).toHaveLength(1)
    }))

  it.effect("a short secondary rate limit is retried once; a long one fails fast with its retry-after", () =>
    Effect.gen(function*() {
      let answered = 0
      const secondary = (retryAfter: string) =>
        http.get(`${API}/repos/:owner/:repo`, () => {
          answered++
          return answered === 1 || retryAfter !== "1"
            ? HttpResponse.json(
              { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
              { status: 403, headers: { "retry-after": retryAfter } }
            )
            : undefined
        })
      gh.server.use(secondary("1"))
      const ok = yield* withHost(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(ok.ref.slug).toBe("Octo-Org/Widget")
      expect(answered).toBe(2)

      answered = 0
      gh.server.use(secondary("600"))
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(e).toMatchObject({ reason: "rate_limited", retryAfterSeconds: 600 })
      expect(answered).toBe(1)
    }))

  it.effect("a 5xx is retried once, then unavailable", () =>
    Effect.gen(function*() {
      let answered = 0
      gh.server.use(http.get(`${API}/repos/:owner/:repo`, () => {
        answered++
        return HttpResponse.json({ message: "Server Error" }, { status: 502 })
      }))
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(e.reason).toBe("unavailable")
      expect(answered).toBe(2)
    }))

  it.effect("a network failure is unavailable", () =>
    Effect.gen(function*() {
      gh.server.use(http.get(`${API}/repos/:owner/:repo`, () => HttpResponse.error()))
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(e.reason).toBe("unavailable")
    }))
})

describe("CodeHostGithub: tree", () => {
  it.effect("maps blobs to files and trees to dirs, leaving submodules out", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const tree = yield* host.tree(yield* host.repo(widget, none), none)
      expect(tree).toEqual({
        entries: [
          { path: "README.md", type: "file", size: 120 },
          { path: "src", type: "dir", size: null },
          { path: "src/index.ts", type: "file", size: 10 }
        ],
        truncated: false
      })
      expect(gh.callsTo("/repos/Octo-Org/Widget/git/trees/")[0]!.url.searchParams.get("recursive")).toBe("1")
    })))

  it.effect("is truncated when GitHub says so", () =>
    Effect.gen(function*() {
      gh.put({ ...WIDGET, treeTruncated: true })
      const tree = yield* withHost(Effect.flatMap(CodeHost, (h) => Effect.flatMap(h.repo(widget, none), (i) => h.tree(i, none))))
      expect(tree.truncated).toBe(true)
      gh.put(WIDGET)
    }))

  it.effect("is cut at the documented entry limit, and then says so", () =>
    Effect.gen(function*() {
      const many = Array.from({ length: 30 }, (_, i) => ({ path: `f${String(i).padStart(2, "0")}.txt`, type: "blob" as const, size: i }))
      gh.put({ ...WIDGET, tree: many })
      const tree = yield* withHost(
        Effect.flatMap(CodeHost, (h) => Effect.flatMap(h.repo(widget, none), (i) => h.tree(i, none))),
        githubHost({ maxTreeEntries: 25 })
      )
      expect(tree.entries).toHaveLength(25)
      expect(tree.truncated).toBe(true)
      gh.put(WIDGET)
    }))
})

describe("CodeHostGithub: README", () => {
  it.effect("a failed load of the README renderer's packages is not kept: the next README loads them again", () =>
    Effect.gen(function*() {
      const real = ReadmePackagesModule.defaultValue()
      let loads = 0
      const flaky = () => (++loads === 1 ? Promise.reject(new Error("EMFILE: too many open files")) : real())
      const layer = githubHost().pipe(Layer.provide(Layer.succeed(ReadmePackagesModule, flaky)))
      yield* withHost(Effect.gen(function*() {
        const host = yield* CodeHost
        const info = yield* host.repo(widget, none)
        expect(Exit.isFailure(yield* Effect.exit(host.readme(info, none)))).toBe(true)
        const readme = Option.getOrThrow(yield* host.readme(info, none))
        expect(readme.html).toContain("<h1>Widget</h1>")
        yield* host.readme(yield* host.repo({ owner: "octo-org", name: "secret-sauce" }, token(PRIVATE_TOKEN)), token(PRIVATE_TOKEN))
        expect(loads).toBe(2)
      }), layer)
    }))

  it.effect("renders markdown without scripts, event handlers, javascript: links, iframes or styles", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const readme = Option.getOrThrow(yield* host.readme(yield* host.repo(widget, none), none))
      expect(readme.path).toBe("README.md")
      expect(readme.markdown).toContain("<script>alert(1)</script>")
      const html = readme.html
      expect(html).toContain("<h1>Widget</h1>")
      for (const banned of ["<script", "alert(1)", "onerror", "onclick", "javascript:", "<iframe", "<style", "display: none", "data:image"]) {
        expect(html).not.toContain(banned)
      }
      // Relative links go to the repo on the code host; relative images to its raw files (https only).
      expect(html).toContain("href=\"https://github.com/Octo-Org/Widget/blob/main/docs/guide.md\"")
      expect(html).toContain("src=\"https://github.com/Octo-Org/Widget/raw/main/img/logo.png\"")
      expect(html).toContain("href=\"https://example.com/\"")
      expect(html).toContain("href=\"#usage\"")
      // The README asked for a "readme" of the pinned commit.
      expect(gh.callsTo("/repos/Octo-Org/Widget/readme")[0]!.url.searchParams.get("ref")).toBe(HEAD)
    })))

  it.effect("is none when the repo has no README (404)", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const info = yield* host.repo({ owner: "octo-org", name: "free-thing" }, none)
      expect(yield* host.readme(info, none)).toEqual(Option.none())
    })))
})

describe("CodeHostGithub: archive", () => {
  it.effect("streams the tarball through the redirect to codeload, without forwarding the Authorization header", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const chunks = yield* Stream.runCollect(host.archive(new RepoRef({ owner: "octo-org", name: "secret-sauce" }), HEAD, token(PRIVATE_TOKEN)))
      const bytes = Buffer.concat(Chunk.toArray(chunks))
      expect(bytes.equals(Buffer.from(SECRET.tarball!))).toBe(true)
      expect(Chunk.size(chunks)).toBeGreaterThanOrEqual(1)
      const [api, codeload] = gh.calls
      expect(api!.url.href).toBe(`${API}/repos/octo-org/secret-sauce/tarball/${HEAD}`)
      expect(api!.authorization).toBe(`Bearer ${PRIVATE_TOKEN}`)
      expect(codeload!.url.origin).toBe(CODELOAD)
      expect(codeload!.authorization).toBeNull()
    })))

  it.effect("fails with the host's reason before any byte when the token cannot read the repo", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const exit = yield* Effect.exit(Stream.runDrain(host.archive(new RepoRef({ owner: "octo-org", name: "secret-sauce" }), HEAD, token("github_pat_bad"))))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("token_rejected")
    })))
})

describe("CodeHostGithub: archives of pinned commits are kept in memory", () => {
  const sauce = new RepoRef({ owner: "octo-org", name: "secret-sauce" })
  const read = (ref: RepoRef, sha: string) =>
    Effect.flatMap(CodeHost, (host) => Stream.runCollect(host.archive(ref, sha, token(PRIVATE_TOKEN)))).pipe(
      Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks)))
    )
  const archiveRequests = () => gh.calls.filter((c) => c.url.pathname.includes("tarball") || c.url.origin === CODELOAD).length

  it.effect("a commit's archive is downloaded once; later reads, in any spelling of the name, are the same bytes from memory", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      expect(wholeArchiveBytes(host.archive(sauce, HEAD, token(PRIVATE_TOKEN)))).toBeUndefined()
      const first = yield* read(sauce, HEAD)
      const again = yield* read(new RepoRef({ owner: "Octo-Org", name: "Secret-Sauce" }), HEAD.toUpperCase())
      expect(first.equals(Buffer.from(SECRET.tarball!))).toBe(true)
      expect(again.equals(first)).toBe(true)
      expect(archiveRequests()).toBe(2)
      // Held whole: the host may send it in one write with its length.
      expect(Buffer.from(wholeArchiveBytes(host.archive(sauce, HEAD, token(PRIVATE_TOKEN)))!).equals(first)).toBe(true)
    })))

  it.effect("the first download of a commit's archive records its digest; asking for it costs no request", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      expect(yield* host.archiveDigest(sauce, HEAD)).toEqual(Option.none())
      const first = yield* read(sauce, HEAD)
      const calls = gh.calls.length
      const digest = { sha256: createHash("sha256").update(first).digest("hex"), size: first.length }
      expect(yield* host.archiveDigest(new RepoRef({ owner: "Octo-Org", name: "Secret-Sauce" }), HEAD)).toEqual(Option.some(digest))
      expect(gh.calls.length).toBe(calls)
      // The bytes held in memory are checked against it and still go out whole.
      expect(Buffer.from(wholeArchiveBytes(host.archive(sauce, HEAD, token(PRIVATE_TOKEN)))!).equals(first)).toBe(true)
    })))

  it.effect("a private archive is answered from memory only to a read with the same token: without it (a takedown destroyed it) the code host decides", () =>
    withHost(Effect.gen(function*() {
      yield* read(sauce, HEAD)
      const host = yield* CodeHost
      for (const other of [none, token(OTHER_TOKEN)]) {
        const exit = yield* Effect.exit(Stream.runDrain(host.archive(sauce, HEAD, other)))
        expect(Exit.isFailure(exit)).toBe(true)
      }
      expect(gh.calls.filter((c) => c.url.pathname.includes("tarball")).length).toBe(3)
    })))

  it.effect("a branch name (which can move) is never answered from memory", () =>
    withHost(Effect.gen(function*() {
      yield* read(sauce, "main")
      yield* read(sauce, "main")
      expect(archiveRequests()).toBe(4)
    })))

  it.effect("an archive above the size limit streams through every time, and none is kept with the cache off", () =>
    Effect.gen(function*() {
      const size = SECRET.tarball!.length
      yield* withHost(Effect.zipRight(read(sauce, HEAD), read(sauce, HEAD)), githubHost({ archiveCacheEntryBytes: size - 1 }))
      expect(archiveRequests()).toBe(4)
      yield* withHost(Effect.zipRight(read(sauce, HEAD), read(sauce, HEAD)), githubHost({ archiveCacheEntryBytes: 0 }))
      expect(archiveRequests()).toBe(8)
      // Exactly at the limit it is kept.
      yield* withHost(Effect.zipRight(read(sauce, HEAD), read(sauce, HEAD)), githubHost({ archiveCacheEntryBytes: size }))
      expect(archiveRequests()).toBe(10)
    }))

  it.effect("the least recently used archive makes room for a new one within the total", () =>
    Effect.gen(function*() {
      const size = SECRET.tarball!.length
      const [a, b] = [HEAD, HEAD.replace(/^0/, "1")]
      // Room for one archive: reading b drops a, reading a again downloads it.
      yield* withHost(Effect.gen(function*() {
        yield* read(sauce, a)
        yield* read(sauce, b)
        yield* read(sauce, b)
        expect(archiveRequests()).toBe(4)
        yield* read(sauce, a)
        expect(archiveRequests()).toBe(6)
      }), githubHost({ archiveCacheBytes: size + size / 2 }))
    }))

  it.effect("what downloads in flight collect stays within the total: one held open leaves no room, and gives it back when it breaks off", () =>
    Effect.gen(function*() {
      const tarball = SECRET.tarball!
      const [held, other] = [HEAD, HEAD.replace(/^0/, "2")]
      let consumed!: () => void
      const firstChunkRead = new Promise<void>((resolve) => (consumed = resolve))
      let breakOff: (() => void) | undefined
      let pulls = 0
      gh.server.use(http.get(`${CODELOAD}/:owner/:repo/legacy.tar.gz/:ref`, ({ params }) =>
        params["ref"] !== held
          ? new HttpResponse(tarball, { headers: { "content-type": "application/x-gzip" } })
          : new HttpResponse(
            new ReadableStream({
              // The first pull gives every byte; the next (the reader wants more) waits until the test breaks the
              // connection off: a slow download in flight.
              pull(controller) {
                if (++pulls === 1) controller.enqueue(tarball)
                else {
                  consumed()
                  return new Promise<void>((done) => (breakOff = () => done(controller.error(new Error("connection reset")))))
                }
              }
            }),
            { headers: { "content-type": "application/x-gzip" } }
          )))
      const downloadsOf = (sha: string) => gh.calls.filter((c) => c.url.pathname.endsWith(`/tarball/${sha}`)).length
      yield* withHost(Effect.gen(function*() {
        const slow = yield* Effect.fork(Effect.flatMap(CodeHost, (host) => Stream.runDrain(host.archive(sauce, held, token(PRIVATE_TOKEN)))))
        yield* Effect.promise(() => firstChunkRead)
        // The slow download holds one archive's bytes; the total has room for one and a half.
        yield* read(sauce, other)
        yield* read(sauce, other)
        expect(downloadsOf(other)).toBe(2)
        breakOff!()
        expect(Exit.isFailure(yield* Fiber.await(slow))).toBe(true)
        yield* read(sauce, other)
        yield* read(sauce, other)
        expect(downloadsOf(other)).toBe(3)
        // Whatever failed above, the held download is let go (a failed expectation must not hang the test).
      }).pipe(Effect.ensuring(Effect.sync(() => breakOff?.()))), githubHost({ archiveCacheBytes: tarball.length + tarball.length / 2 }))
    }))

  it.effect("a download that breaks off is never kept: the next read downloads again and gets every byte", () =>
    withHost(Effect.gen(function*() {
      const tarball = SECRET.tarball!
      gh.server.use(http.get(`${CODELOAD}/:owner/:repo/legacy.tar.gz/:ref`, () =>
        new HttpResponse(
          new ReadableStream({
            start(controller) {
              controller.enqueue(tarball.subarray(0, 8))
              controller.error(new Error("connection reset"))
            }
          }),
          { headers: { "content-type": "application/x-gzip" } }
        ), { once: true }))
      const broken = yield* Effect.exit(read(sauce, HEAD))
      expect(Exit.isFailure(broken)).toBe(true)
      const whole = yield* read(sauce, HEAD)
      expect(whole.equals(Buffer.from(tarball))).toBe(true)
      yield* read(sauce, HEAD)
      expect(gh.calls.filter((c) => c.url.pathname.includes("tarball")).length).toBe(2)
    })))
})

describe("CodeHostGithub: cut (an archive read whole and kept ahead of its delivery)", () => {
  const sauce = new RepoRef({ owner: "octo-org", name: "secret-sauce" })
  const tarballRequests = () => gh.calls.filter((c) => c.url.pathname.includes("tarball")).length
  const digestOf = (bytes: Uint8Array) => ({ sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length })

  it.effect("answers the digest of the bytes it kept: the next archive of the commit is those bytes, with no request", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const cut = yield* host.cut(sauce, HEAD, token(PRIVATE_TOKEN), "paid")
      expect(cut).toEqual(Option.some(digestOf(SECRET.tarball!)))
      expect(yield* host.archiveDigest(sauce, HEAD)).toEqual(cut)
      expect(tarballRequests()).toBe(1)
      const bytes = yield* Stream.runCollect(host.archive(sauce, HEAD, token(PRIVATE_TOKEN)))
      expect(Buffer.concat(Chunk.toArray(bytes)).equals(Buffer.from(SECRET.tarball!))).toBe(true)
      // A second cut of a commit already known asks nothing.
      expect(yield* host.cut(sauce, HEAD, token(PRIVATE_TOKEN), "paid")).toEqual(cut)
      expect(tarballRequests()).toBe(1)
    })))

  // An archive larger than the adapter keeps: CodeHostGithubCut.test.ts (a real socket; msw cannot cancel a body).
  it.effect("keeps nothing and reads nothing for a name that is not a commit id, or with nothing kept at all", () =>
    Effect.gen(function*() {
      yield* withHost(Effect.flatMap(CodeHost, (host) => host.cut(sauce, "main", token(PRIVATE_TOKEN), "paid")).pipe(Effect.map((cut) => expect(cut).toEqual(Option.none()))))
      yield* withHost(
        Effect.flatMap(CodeHost, (host) => host.cut(sauce, HEAD, token(PRIVATE_TOKEN), "paid")).pipe(Effect.map((cut) => expect(cut).toEqual(Option.none()))),
        githubHost({ archiveCacheEntryBytes: 0 })
      )
      expect(tarballRequests()).toBe(0)
    }))

  it.effect("an offer's, ahead of any sale: with the server's credential it keeps off the quota's reserve (quota_reserved, nothing asked); with the listing's own token it goes; a delivery's cut always goes", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const widgetRef = new RepoRef(widget)
      // 12 left of 60: exactly the reserve (20 %), so no spare call may go.
      gh.setQuota({ limit: 60, remaining: 12, resetEpochSeconds: Math.floor(Date.now() / 1000) + 600 })
      const refused = yield* Effect.flip(host.cut(widgetRef, HEAD, none, "offer"))
      expect(refused).toMatchObject({ reason: "quota_reserved" })
      expect(tarballRequests()).toBe(0)
      expect(yield* host.cut(sauce, HEAD, token(PRIVATE_TOKEN), "offer")).toEqual(Option.some(digestOf(SECRET.tarball!)))
      expect(tarballRequests()).toBe(1)
      // A delivery's cut is the paid delivery's own download: not a spare call.
      expect(yield* host.cut(widgetRef, HEAD, none, "paid")).toEqual(Option.some(digestOf(WIDGET.tarball!)))
      expect(tarballRequests()).toBe(2)
    }), offerKeeping()))

  it.effect("fails as the archive does, and records nothing", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const failure = yield* Effect.flip(host.cut(sauce, HEAD, token(OTHER_TOKEN), "paid"))
      expect(failure._tag).toBe("CodeHostError")
      expect(yield* host.archiveDigest(sauce, HEAD)).toEqual(Option.none())
    })))
})

describe("CodeHostGithub: owner index", () => {
  it.effect("lists the owner's public repos, leaving out forks and archived ones", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      const repos = yield* host.ownerRepos("octo-org")
      expect(repos.map((r) => r.ref.slug).sort()).toEqual(["Octo-Org/Widget", "Octo-Org/free-thing"])
      const call = gh.calls[0]!
      expect(call.url.pathname).toBe("/users/octo-org/repos")
      expect(Object.fromEntries(call.url.searchParams)).toMatchObject({ type: "owner", per_page: "100", page: "1" })
      expect(host.ownerUrl("Octo-Org")).toBe("https://github.com/Octo-Org")
    })))

  it.effect("follows pages up to the documented cap", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 250; i++) gh.put({ owner: "busy", name: `repo-${i}`, sha: HEAD })
      const all = yield* withHost(Effect.flatMap(CodeHost, (h) => h.ownerRepos("busy")))
      expect(all).toHaveLength(250)
      expect(gh.calls.map((c) => c.url.searchParams.get("page"))).toEqual(["1", "2", "3"])
      gh.reset()
      const capped = yield* withHost(Effect.flatMap(CodeHost, (h) => h.ownerRepos("busy")), githubHost({ maxOwnerPages: 2 }))
      expect(capped).toHaveLength(200)
      expect(gh.calls).toHaveLength(2)
    }))

  it.effect("an unknown owner is repo_not_found", () =>
    Effect.gen(function*() {
      // An owner no other test of this file creates: the fake GitHub keeps repos a test put there (the test
      // below puts no-such-owner/first), so a shared name would depend on the order the tests run in.
      const e = yield* failureOf(Effect.flatMap(CodeHost, (h) => h.ownerRepos("owner-nobody-registers")))
      expect(e.reason).toBe("repo_not_found")
    }))

  // Issue 12, finding 5: made-up owner names must not drain the server's shared GitHub quota.
  it.effect("an unknown owner is remembered for 5 minutes: asking again costs GitHub nothing until then", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      for (let i = 0; i < 5; i++) {
        const e = yield* Effect.flip(host.ownerRepos("No-Such-Owner"))
        expect(e.reason).toBe("repo_not_found")
      }
      expect(gh.calls).toHaveLength(1)
      yield* TestClock.adjust("4 minutes")
      expect((yield* Effect.flip(host.ownerRepos("no-such-owner"))).reason).toBe("repo_not_found")
      expect(gh.calls).toHaveLength(1)
      // Once the window has passed, GitHub is asked again (the owner may exist by now).
      yield* TestClock.adjust("2 minutes")
      gh.put({ owner: "no-such-owner", name: "first", sha: HEAD })
      expect((yield* host.ownerRepos("no-such-owner")).map((r) => r.ref.slug)).toEqual(["no-such-owner/first"])
      expect(gh.calls).toHaveLength(2)
    })))

  it.effect("an outage is not remembered as a missing owner", () =>
    withHost(Effect.gen(function*() {
      const host = yield* CodeHost
      gh.server.use(http.get(`${API}/users/:owner/repos`, () => new HttpResponse(null, { status: 503 }), { once: false }))
      expect((yield* Effect.flip(host.ownerRepos("flaky"))).reason).toBe("unavailable")
      gh.server.resetHandlers()
      gh.put({ owner: "flaky", name: "thing", sha: HEAD })
      expect((yield* host.ownerRepos("flaky")).map((r) => r.ref.slug)).toEqual(["flaky/thing"])
    })))
})

describe("CodeHostGithub: the operator's log line when GitHub is down", () => {
  /** Runs `effect` on a fresh adapter and keeps the log lines it writes. */
  const logged = <A, E>(effect: Effect.Effect<A, E, CodeHost>, config: Record<string, string> = {}) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const keep = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message))))
      const exit = yield* Effect.exit(Effect.provide(effect, Layer.merge(githubHost({}, config), keep)))
      return { exit, lines }
    })

  it.effect("no answer: one warning naming GITHUB_API_URL and the network's reason; the caller gets unavailable", () =>
    Effect.gen(function*() {
      gh.server.use(http.get(`${API}/repos/:owner/:repo`, () => HttpResponse.error()))
      const { exit, lines } = yield* logged(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(lines.filter((l) => l.startsWith("Code host unavailable"))).toEqual([
        `Code host unavailable: GitHub at GITHUB_API_URL ${API} did not answer (TypeError), asked anonymously`
      ])
    }))

  it.effect("GITHUB_TOKEN refused: the warning names the setting and never holds the token or the repo", () =>
    Effect.gen(function*() {
      const serverToken = ["github", "pat", "fake", "server", "0003"].join("_")
      gh.server.use(http.get(`${API}/repos/:owner/:repo`, () => HttpResponse.json({ message: "Bad credentials" }, { status: 401 })))
      const { lines } = yield* logged(Effect.flatMap(CodeHost, (h) => h.repo(widget, none)), { GITHUB_TOKEN: serverToken })
      const warnings = lines.filter((l) => l.startsWith("Code host unavailable"))
      expect(warnings).toEqual([`Code host unavailable: GitHub at GITHUB_API_URL ${API} rejected GITHUB_TOKEN (expired, revoked or mistyped), asked with GITHUB_TOKEN`])
      expect(warnings.join("\n")).not.toContain(serverToken)
      expect(warnings.join("\n")).not.toMatch(/widget/i)
    }))

  it.effect("a refusal about the repo or a listing's token is the seller's answer (422), not an outage: nothing logged", () =>
    Effect.gen(function*() {
      const { lines } = yield* logged(Effect.flatMap(CodeHost, (h) => h.repo({ owner: "octo-org", name: "no-such-repo" }, none)))
      expect(lines.filter((l) => l.startsWith("Code host unavailable"))).toEqual([])
    }))
})

/*
 * Issue 39: a repository or commit GitHub says is gone (deleted, private to the credential asking, a token
 * revoked or destroyed with its listing) is remembered per repository and credential for 10 minutes, so asking
 * again costs GitHub nothing; outages, rate limits and empty repositories are never remembered. Through the
 * CodeHost port of the GitHub adapter, against the msw fake GitHub, counting the calls it receives.
 */
import { describe, expect, it } from "@effect/vitest"
import { http, HttpResponse } from "msw"
import { Effect, Option, Redacted, Stream, TestClock } from "effect"
import { GONE_FRESH_MS, GoneRepos, isGone } from "../../../adapters/github/GoneRepos.js"
import { RepoRef } from "../../../domain/Ids.js"
import { CodeHost, CodeHostError } from "../../../ports/CodeHost.js"
import { API, type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { githubHost, HEAD, OTHER, OTHER_TOKEN, PRIVATE_TOKEN, SECRET, serveFakeGithub, tarballBytes } from "./support.js"

const DOOMED: GhRepo = { owner: "Octo-Org", name: "Doomed", sha: HEAD, tarball: tarballBytes(10_000), tree: [{ path: "a.txt", type: "blob", size: 1 }] }
const gh = makeFakeGithub([DOOMED, SECRET, OTHER])
serveFakeGithub(gh, {
  afterEachTest: () => {
    gh.put(DOOMED)
    gh.put(SECRET)
  }
})

const none = Option.none<Redacted.Redacted<string>>()
const token = (value: string) => Option.some(Redacted.make(value))
const doomed = new RepoRef({ owner: "Octo-Org", name: "Doomed" })
const secret = new RepoRef({ owner: "Octo-Org", name: "secret-sauce" })
/** The repository deleted on GitHub (or made private): every anonymous ask is a 404, as for a deleted one. */
const deleteDoomed = () => gh.put({ ...DOOMED, private: true, token: "nobody-holds-this" })
const repoCalls = () => gh.calls.filter((c) => /^\/repos\/[^/]+\/[^/]+$/.test(c.url.pathname)).length
const tarballCalls = () => gh.calls.filter((c) => c.url.pathname.includes("/tarball/")).length
const fresh = <A, E>(effect: Effect.Effect<A, E, CodeHost>) => Effect.provide(effect, githubHost())

describe("CodeHostGithub: what GitHub says is gone is remembered", () => {
  it.effect("a deleted repository asked 100 times costs one call; after 10 minutes GitHub is asked again", () =>
    fresh(Effect.gen(function*() {
      const host = yield* CodeHost
      deleteDoomed()
      for (let i = 0; i < 100; i++) expect((yield* Effect.flip(host.repo(doomed, none))).reason).toBe("repo_not_found")
      // Any spelling of its name is the same repository.
      expect((yield* Effect.flip(host.repo({ owner: "octo-org", name: "DOOMED" }, none))).reason).toBe("repo_not_found")
      expect(gh.calls).toHaveLength(1)
      // Its archive, any commit, asks nothing either: the repository is gone for this credential.
      const archive = yield* Effect.flip(Stream.runDrain(host.archive(doomed, HEAD, none)))
      expect(archive.reason).toBe("repo_not_found")
      expect(gh.calls).toHaveLength(1)

      yield* TestClock.adjust(GONE_FRESH_MS - 1)
      expect((yield* Effect.flip(host.repo(doomed, none))).reason).toBe("repo_not_found")
      expect(gh.calls).toHaveLength(1)
      // The window has passed and the repository is back (re-created, or public again): found.
      yield* TestClock.adjust(1)
      gh.put(DOOMED)
      expect((yield* host.repo(doomed, none)).headSha).toBe(HEAD)
      expect(repoCalls()).toBe(2)
    })))

  it.effect("a listing's token that GitHub refuses (revoked, or another repository's) is remembered for that token only", () =>
    fresh(Effect.gen(function*() {
      const host = yield* CodeHost
      for (let i = 0; i < 20; i++) expect((yield* Effect.flip(host.repo(secret, token("github_pat_revoked_0000")))).reason).toBe("token_rejected")
      for (let i = 0; i < 20; i++) expect((yield* Effect.flip(host.repo(secret, token(OTHER_TOKEN)))).reason).toBe("token_lacks_access")
      for (let i = 0; i < 20; i++) expect((yield* Effect.flip(host.repo(secret, none))).reason).toBe("repo_not_found")
      expect(gh.calls).toHaveLength(3)
      // The seller's working token is another credential: asked, and answered.
      expect((yield* host.repo(secret, token(PRIVATE_TOKEN))).isPrivate).toBe(true)
    })))

  it.effect("a commit whose archive GitHub refuses is remembered: 50 downloads of it cost one call; another commit is asked", () =>
    fresh(Effect.gen(function*() {
      const host = yield* CodeHost
      const gone = "f".repeat(40)
      let refused = 0
      gh.server.use(http.get(`${API}/repos/:owner/:repo/tarball/:ref`, ({ params }) => {
        if (params["ref"] !== gone) return undefined
        refused++
        return HttpResponse.json({ message: "Not Found" }, { status: 404 })
      }))
      for (let i = 0; i < 50; i++) {
        expect((yield* Effect.flip(Stream.runDrain(host.archive(doomed, gone, none)))).reason).toBe("repo_not_found")
      }
      expect(refused).toBe(1)
      const bytes = yield* Stream.runFold(host.archive(doomed, HEAD, none), 0, (n, chunk) => n + chunk.length)
      expect(bytes).toBe(DOOMED.tarball!.length)
      expect(tarballCalls()).toBe(1)
      expect(refused).toBe(1)
    })))

  it.effect("outages, rate limits and an empty repository are never remembered: the next ask goes to GitHub", () =>
    fresh(Effect.gen(function*() {
      const host = yield* CodeHost
      let answer: () => Response = () => new HttpResponse(null, { status: 502 })
      gh.server.use(http.get(`${API}/repos/:owner/:repo`, () => answer()))
      expect((yield* Effect.flip(host.repo(doomed, none))).reason).toBe("unavailable")
      answer = () =>
        HttpResponse.json({ message: "API rate limit exceeded" }, {
          status: 403,
          headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 60) }
        })
      expect((yield* Effect.flip(host.repo(doomed, none))).reason).toBe("rate_limited")
      answer = () => HttpResponse.json({ message: "Git Repository is empty." }, { status: 409 })
      expect((yield* Effect.flip(host.repo(doomed, none))).message).toContain("empty")
      gh.server.resetHandlers()
      expect((yield* host.repo(doomed, none)).headSha).toBe(HEAD)
    })))
})

describe("GoneRepos", () => {
  const ref = { owner: "A", name: "B" }
  const notFound = new CodeHostError({ reason: "repo_not_found", message: "The repository is missing or private (add host_pat)." })

  it("keeps only what says gone; forgets the oldest past its bound; a repository's entry answers for its commits", () => {
    expect([
      notFound,
      new CodeHostError({ reason: "token_rejected", message: "x" }),
      new CodeHostError({ reason: "token_lacks_access", message: "x" }),
      new CodeHostError({ reason: "repo_not_found", message: "The repository is empty: it has no commits yet." }),
      new CodeHostError({ reason: "unavailable", message: "x" }),
      new CodeHostError({ reason: "rate_limited", message: "x" }),
      new CodeHostError({ reason: "quota_reserved", message: "x" }),
      new CodeHostError({ reason: "private_repo_needs_token", message: "x" })
    ].map(isGone)).toEqual([true, true, true, false, false, false, false, false])

    const gone = new GoneRepos(1000, 2)
    gone.remember(ref, none, null, new CodeHostError({ reason: "unavailable", message: "x" }), 0)
    expect(gone.size).toBe(0)
    gone.remember(ref, none, null, notFound, 0)
    expect(gone.known({ owner: "a", name: "b" }, none, "c".repeat(40), 999)).toBe(notFound)
    expect(gone.known(ref, token("t"), null, 0)).toBeUndefined()
    expect(gone.known(ref, none, null, 1000)).toBeUndefined()
    expect(gone.size).toBe(0)

    gone.remember(ref, none, "C".repeat(40), notFound, 0)
    expect(gone.known(ref, none, "c".repeat(40), 1)).toBe(notFound)
    expect(gone.known(ref, none, "d".repeat(40), 1)).toBeUndefined()
    expect(gone.known(ref, none, null, 1)).toBeUndefined()
    gone.remember({ owner: "x", name: "y" }, none, null, notFound, 0)
    gone.remember({ owner: "z", name: "w" }, none, null, notFound, 0)
    expect(gone.size).toBe(2)
    expect(gone.known(ref, none, "c".repeat(40), 1)).toBeUndefined()
    expect(gone.known({ owner: "z", name: "w" }, none, null, 1)).toBe(notFound)
    new GoneRepos(0).remember(ref, none, null, notFound, 0)
  })
})

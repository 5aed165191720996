import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { credentialKey, EtagCache } from "../../../adapters/github/EtagCache.js"
import { GONE_FRESH_MS } from "../../../adapters/github/GoneRepos.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { makeFakeGithub } from "./FakeGithub.js"
import { FREE, githubHost, PRIVATE_TOKEN, SECRET, serveFakeGithub, WIDGET } from "./support.js"

const gh = makeFakeGithub([WIDGET, SECRET, FREE])
serveFakeGithub(gh, { afterEachTest: () => gh.put(WIDGET) })

const none = Option.none<Redacted.Redacted<string>>()
const widget = { owner: "octo-org", name: "widget" }

describe("ETag cache (through the adapter)", () => {
  it.effect("a second view inside the window costs nothing; after it, one conditional request per answer, answered 304", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      const view = Effect.gen(function*() {
        const info = yield* host.repo(widget, none)
        const [tree, readme] = yield* Effect.all([host.tree(info, none), host.readme(info, none)])
        return { info, tree, readme }
      })
      const first = yield* view
      expect(gh.calls).toHaveLength(4)
      expect(gh.calls.every((c) => c.status === 200 && c.ifNoneMatch === null)).toBe(true)

      yield* TestClock.adjust("9 minutes")
      expect(yield* view).toEqual(first)
      expect(gh.calls).toHaveLength(4)

      yield* TestClock.adjust("2 minutes")
      expect(yield* view).toEqual(first)
      const revalidated = gh.calls.slice(4)
      expect(revalidated).toHaveLength(4)
      for (const call of revalidated) {
        expect(call.ifNoneMatch).not.toBeNull()
        expect(call.status).toBe(304)
      }

      // A 304 renews the window.
      yield* TestClock.adjust("9 minutes")
      yield* view
      expect(gh.calls).toHaveLength(8)
    }).pipe(Effect.provide(githubHost())))

  it.effect("a changed answer after the window replaces the cached one", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      expect((yield* host.repo(widget, none)).stars).toBe(42)
      gh.put({ ...WIDGET, stars: 43 })
      expect((yield* host.repo(widget, none)).stars).toBe(42)
      yield* TestClock.adjust("11 minutes")
      expect((yield* host.repo(widget, none)).stars).toBe(43)
      expect(gh.calls.slice(2).map((c) => c.status)).toEqual([200, 304])
    }).pipe(Effect.provide(githubHost())))

  it.effect("the owner index is cached the same way", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      const first = yield* host.ownerRepos("octo-org")
      expect(yield* host.ownerRepos("Octo-Org")).toBeDefined()
      yield* host.ownerRepos("octo-org")
      expect(gh.calls.filter((c) => c.url.pathname === "/users/octo-org/repos")).toHaveLength(1)
      yield* TestClock.adjust("11 minutes")
      expect(yield* host.ownerRepos("octo-org")).toEqual(first)
      expect(gh.calls.at(-1)!.status).toBe(304)
    }).pipe(Effect.provide(githubHost())))

  it.effect("a private answer is cached per token: another token, or none, is asked about afresh", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      const secret = { owner: "octo-org", name: "secret-sauce" }
      yield* host.repo(secret, Option.some(Redacted.make(PRIVATE_TOKEN)))
      expect(gh.calls).toHaveLength(2)
      const anonymous = yield* Effect.flip(host.repo(secret, none))
      expect(anonymous.reason).toBe("repo_not_found")
      const wrong = yield* Effect.flip(host.repo(secret, Option.some(Redacted.make("github_pat_someone_else"))))
      expect(wrong.reason).toBe("token_rejected")
      expect(gh.calls).toHaveLength(4)
    }).pipe(Effect.provide(githubHost())))

  it.effect("a repository GitHub says is missing is taken as gone for GONE_FRESH_MS (as a found one is served from the cache), then asked again", () =>
    Effect.gen(function*() {
      const host = yield* CodeHost
      const missing = { owner: "octo-org", name: "later" }
      expect(yield* Effect.flip(host.repo(missing, none))).toMatchObject({ reason: "repo_not_found" })
      gh.put({ owner: "octo-org", name: "later" })
      expect(yield* Effect.flip(host.repo(missing, none))).toMatchObject({ reason: "repo_not_found" })
      yield* TestClock.adjust(GONE_FRESH_MS + 1)
      expect((yield* host.repo(missing, none)).ref.name).toBe("later")
    }).pipe(Effect.provide(githubHost())))
})

describe("EtagCache", () => {
  const cache = () => new EtagCache({ freshMs: 1000, maxEntries: 3, maxWeight: 100 })

  it("evicts the least recently used entry beyond the entry cap", () => {
    const c = cache()
    c.set("a", null, 1, 10, 0)
    c.set("b", null, 2, 10, 0)
    c.set("c", null, 3, 10, 0)
    c.get("a")
    c.set("d", null, 4, 10, 0)
    expect([c.get("a")?.value, c.get("b"), c.get("c")?.value, c.get("d")?.value]).toEqual([1, undefined, 3, 4])
    expect(c.size).toBe(3)
  })

  it("evicts by weight, and does not keep an answer larger than the budget", () => {
    const c = cache()
    c.set("a", null, "a", 60, 0)
    c.set("b", null, "b", 60, 0)
    expect(c.get("a")).toBeUndefined()
    expect(c.totalWeight).toBe(60)
    c.set("huge", null, "x", 101, 0)
    expect(c.get("huge")).toBeUndefined()
    expect(c.get("b")?.value).toBe("b")
  })

  it("is fresh for the window, and a renewal starts a new one", () => {
    const c = cache()
    c.set("a", "\"e\"", 1, 1, 0)
    expect(c.isFresh(c.get("a")!, 999)).toBe(true)
    expect(c.isFresh(c.get("a")!, 1000)).toBe(false)
    c.renew("a", 1500)
    expect(c.isFresh(c.get("a")!, 2499)).toBe(true)
    expect(c.get("a")!.etag).toBe("\"e\"")
  })

  it("keys a token by digest, never by its value", () => {
    const key = credentialKey(Option.some(Redacted.make(PRIVATE_TOKEN)))
    expect(key).toMatch(/^token:[0-9a-f]{32}$/)
    expect(key).not.toContain(PRIVATE_TOKEN)
    expect(credentialKey(Option.some(Redacted.make("another")))).not.toBe(key)
    expect(credentialKey(Option.none())).toBe("public")
  })
})

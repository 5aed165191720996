import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { afterAll, afterEach, beforeAll } from "vitest"
import { BASE_WALLET, call, signInWithKey } from "../../support/app.js"
import { API, makeFakeGithub } from "./FakeGithub.js"
import { GithubTestApp } from "./GithubApp.js"
import { FREE, HEAD, OTHER, OTHER_TOKEN, PRIVATE_TOKEN, SECRET, WIDGET } from "./support.js"

const gh = makeFakeGithub([WIDGET, SECRET, OTHER, FREE])
beforeAll(() =>
  gh.server.listen({
    // The app under test answers on loopback; anything else unhandled would be a request to the real GitHub.
    onUnhandledRequest: (request, print) => {
      if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(request.url).hostname)) print.error()
    }
  }))
afterEach(() => {
  gh.server.resetHandlers()
  gh.reset()
})
afterAll(() => gh.server.close())

const SECRET_URL = "https://github.com/octo-org/secret-sauce"

describe("the GitHub code host through HTTP, each in an app of its own", () => {
  // The owner page another test had GitHub answer would be served from the app's cache instead of the rate limit.
  layer(GithubTestApp())((it) => {
    it.effect("a rate-limited code host is a 503 problem with Retry-After, never a 500; an owner page then asks it nothing and says its index is left out", () =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        gh.setRateLimited({ resetEpochSeconds: Math.floor(now / 1000) + 90 })
        // An anonymous lookup under the quota's reserve (here: none left) is not sent at all.
        const owner = yield* call("GET", "/r/octo-org")
        expect(owner.status, owner.text).toBe(200)
        expect(owner.json).toMatchObject({ indexed: [], indexed_available: false })
        expect(owner.json.indexed_note).toContain("quota")
        expect(gh.calls).toHaveLength(0)
        // Listing is no spare call: it asks, and GitHub's refusal is a 503 with its wait.
        const reply = yield* call("POST", "/repos", { body: { host_url: "https://github.com/octo-org/widget", price_usd: "5.00", wallet_base: BASE_WALLET } })
        expect(reply.status).toBe(503)
        expect(reply.headers["content-type"]).toMatch(/^application\/problem\+json/)
        expect(reply.json.code).toBe("host_unavailable")
        expect(reply.headers["retry-after"]).toBe("90")
        expect(reply.json.retry_after_seconds).toBe(90)
        expect(gh.calls).toHaveLength(1)
      }))
  })

  layer(GithubTestApp())((it) => {
    it.effect("the repo page previews the tree and the sanitised README from GitHub, with the stored token", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("preview-seller@example.com")
        const listed = yield* call("POST", "/repos", {
          token: key,
          body: { host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, host_pat: PRIVATE_TOKEN }
        })
        expect(listed.status, listed.text).toBe(201)
        const page = yield* call("GET", "/r/octo-org/secret-sauce", { headers: { accept: "application/json" } })
        expect(page.status, page.text).toBe(200)
        expect(page.json.preview_available).toBe(true)
        expect(page.json.commit).toBe(HEAD)
        expect(page.json.tree.entries).toEqual([{ path: "README.md", type: "file", size: 8 }])
        expect(page.json.readme.html).toBe("<h1>Secret</h1>\n")
        expect(page.text).not.toContain(PRIVATE_TOKEN)
      }))
  })
})

describe("the GitHub code host through HTTP", () => {
  layer(GithubTestApp())((it) => {
    it.effect("a private repo is refused (422) without a token, with a bad one, or one without access; nothing is stored", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("private-seller@example.com")
        const list = (extra: Record<string, string>) =>
          call("POST", "/repos", { token: key, body: { host_url: SECRET_URL, price_usd: "5.00", wallet_base: BASE_WALLET, ...extra } })
        const refusals = [
          [yield* list({}), "repo_not_found"],
          [yield* list({ host_pat: "github_pat_not_a_real_one" }), "token_rejected"],
          [yield* list({ host_pat: OTHER_TOKEN }), "token_lacks_access"]
        ] as const
        for (const [reply, reason] of refusals) {
          expect(reply.status, reply.text).toBe(422)
          expect(reply.json.reason).toBe(reason)
          expect(reply.text).not.toContain("github_pat_")
        }
        expect(refusals[0][0].json.detail).toContain("add host_pat")
        expect((yield* call("GET", "/r/octo-org/secret-sauce", { headers: { accept: "application/json" } })).status).toBe(404)

        const listed = yield* list({ host_pat: PRIVATE_TOKEN })
        expect(listed.status, listed.text).toBe(201)
        expect(listed.json.page).toBe("/r/Octo-Org/secret-sauce")
        const tokenCalls = gh.calls.filter((c) => c.authorization === `Bearer ${PRIVATE_TOKEN}`)
        expect(tokenCalls.length).toBeGreaterThan(0)
        expect(tokenCalls.every((c) => c.url.origin === API)).toBe(true)
      }))

    it.effect("the owner page indexes the owner's public repos with a category", () =>
      Effect.gen(function*() {
        const page = yield* call("GET", "/r/octo-org")
        expect(page.status, page.text).toBe(200)
        expect(page.json.host).toBe("https://github.com/Octo-Org")
        const indexed = Object.fromEntries(page.json.indexed.map((r: any) => [r.repo, r]))
        expect(indexed["Octo-Org/Widget"]).toMatchObject({ host: "https://github.com/Octo-Org/Widget", stars: 42, license: "MIT", category: "library" })
        expect(indexed["Octo-Org/free-thing"]).toMatchObject({ category: "cli", description: "free" })
      }))
  })
})

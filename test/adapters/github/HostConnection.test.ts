import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { afterAll, afterEach, beforeAll } from "vitest"
import { BASE_URL, call, signIn } from "../../support/app.js"
import { makeFakeGithub, WEB } from "./FakeGithub.js"
import { GithubTestApp } from "./GithubApp.js"
import { FREE, WIDGET } from "./support.js"

const gh = makeFakeGithub([WIDGET, FREE])
beforeAll(() =>
  gh.server.listen({
    onUnhandledRequest: (request, print) => {
      if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(request.url).hostname)) print.error()
    }
  }))
afterEach(() => {
  gh.server.resetHandlers()
  gh.reset()
})
afterAll(() => gh.server.close())

/** Starts the connection as the holder of `session`; returns GitHub's authorize URL. */
const start = (session: string) =>
  Effect.map(call("GET", "/auth/host/start", { token: session }), (reply) => {
    expect(reply.status, reply.text).toBe(302)
    expect(reply.headers["cache-control"]).toBe("no-store")
    return new URL(reply.headers["location"]!)
  })

const callback = (params: Record<string, string>) => call("GET", `/auth/host/callback?${new URLSearchParams(params)}`)

const expectBadRequest = (reply: { status: number; json: any }, field: string) => {
  expect(reply.status).toBe(400)
  expect(reply.json.code).toBe("invalid_request")
  expect(reply.json.errors.map((e: { field: string }) => e.field)).toEqual([field])
}

describe("code-host connection (GitHub OAuth web flow)", () => {
  layer(GithubTestApp())((it) => {
    it.effect("start → GitHub → callback stores the verified login; the owner page is then claimed with its tagline", () =>
      Effect.gen(function*() {
        const session = yield* signIn("octo-owner@example.com")
        const tagline = yield* call("PATCH", "/my/account", { token: session, body: { storefront_tagline: "Widgets since 2024" } })
        expect(tagline.status, tagline.text).toBe(200)
        const before = yield* call("GET", "/r/octo-org")
        expect(before.json).toMatchObject({ claimed: false, storefront_tagline: null })

        const authorize = yield* start(session)
        expect(`${authorize.origin}${authorize.pathname}`).toBe(`${WEB}/login/oauth/authorize`)
        expect(authorize.searchParams.get("client_id")).toBe("oauth-client-id")
        expect(authorize.searchParams.get("redirect_uri")).toBe(`${BASE_URL}/auth/host/callback`)
        expect(authorize.searchParams.get("prompt")).toBe("select_account")
        expect(authorize.searchParams.has("scope")).toBe(false)
        const state = authorize.searchParams.get("state")!
        expect(state.length).toBeGreaterThan(40)
        expect(state).not.toContain("acct_")

        // The seller authorizes on GitHub, which redirects the browser back with a one-time code.
        gh.issueCode("code-from-github-1", "Octo-Org")
        const done = yield* callback({ code: "code-from-github-1", state })
        expect(done.status, done.text).toBe(200)
        expect(done.json).toEqual({ host_login: "Octo-Org" })

        const [exchange, user] = gh.calls.filter((c) => c.url.pathname === "/login/oauth/access_token" || c.url.pathname === "/user")
        expect(`${exchange!.method} ${exchange!.url.href}`).toBe(`POST ${WEB}/login/oauth/access_token`)
        expect(user!.url.pathname).toBe("/user")
        // GitHub's token was used once, for GET /user, and is in no answer of ours.
        const oauthToken = user!.authorization!.replace(/^Bearer /, "")
        expect(oauthToken).toMatch(/^gho_/)
        expect(done.text).not.toContain(oauthToken)
        expect((yield* call("GET", "/my/account", { token: session })).json.host_login).toBe("Octo-Org")

        const after = yield* call("GET", "/r/octo-org")
        expect(after.json).toMatchObject({ owner: "Octo-Org", claimed: true, storefront_tagline: "Widgets since 2024" })
      }))

    it.effect("a missing, forged, tampered or expired state is a 400, and the code is not spent", () =>
      Effect.gen(function*() {
        const session = yield* signIn("state-checker@example.com")
        gh.issueCode("code-kept", "someone")
        expectBadRequest(yield* callback({ code: "code-kept" }), "state")
        expectBadRequest(yield* callback({ code: "code-kept", state: "not-a-state" }), "state")
        expectBadRequest(yield* callback({ code: "code-kept", state: "v1.test.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA" }), "state")
        const state = (yield* start(session)).searchParams.get("state")!
        const parts = state.split(".")
        parts[3] = parts[3]!.startsWith("A") ? `B${parts[3]!.slice(1)}` : `A${parts[3]!.slice(1)}`
        expectBadRequest(yield* callback({ code: "code-kept", state: parts.join(".") }), "state")
        yield* TestClock.adjust("11 minutes")
        expectBadRequest(yield* callback({ code: "code-kept", state }), "state")
        expect(gh.calls).toHaveLength(0)
        expect((yield* call("GET", "/my/account", { token: session })).json.host_login).toBeNull()
      }))

    it.effect("a refused code or a declined authorization is a 400", () =>
      Effect.gen(function*() {
        const session = yield* signIn("decliner@example.com")
        const state = (yield* start(session)).searchParams.get("state")!
        expectBadRequest(yield* callback({ code: "never-issued", state }), "code")
        expectBadRequest(yield* callback({ error: "access_denied", error_description: "The user has denied your application access.", state }), "code")
        expect((yield* call("GET", "/my/account", { token: session })).json.host_login).toBeNull()
      }))

    it.effect("starting needs a credential", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/auth/host/start")
        expect(reply.status).toBe(401)
        expect(reply.headers["www-authenticate"]).toBe("Bearer")
      }))

    it.effect("a login belongs to one account: a newer proof moves it", () =>
      Effect.gen(function*() {
        const first = yield* signIn("first-claimant@example.com")
        const second = yield* signIn("second-claimant@example.com")
        for (const [session, code] of [[first, "code-a"], [second, "code-b"]] as const) {
          gh.issueCode(code, "Shared-Login")
          const state = (yield* start(session)).searchParams.get("state")!
          expect((yield* callback({ code, state })).status).toBe(200)
        }
        expect((yield* call("GET", "/my/account", { token: first })).json.host_login).toBeNull()
        expect((yield* call("GET", "/my/account", { token: second })).json.host_login).toBe("Shared-Login")
      }))
  })

  layer(GithubTestApp({}))((it) => {
    it.effect("without GITHUB_CLIENT_ID/GITHUB_CLIENT_SECRET both endpoints answer 503 not_configured", () =>
      Effect.gen(function*() {
        const session = yield* signIn("unconfigured@example.com")
        for (const reply of [yield* call("GET", "/auth/host/start", { token: session }), yield* callback({ code: "x", state: "y" })]) {
          expect(reply.status).toBe(503)
          expect(reply.json.code).toBe("not_configured")
          expect(reply.json.detail).toContain("GITHUB_CLIENT_ID")
        }
        expect(gh.calls).toHaveLength(0)
      }))
  })
})

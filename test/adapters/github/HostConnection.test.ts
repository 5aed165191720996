import { describe, expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { afterAll, afterEach, beforeAll } from "vitest"
import { BASE_URL, call, signIn, signInWithKey } from "../../support/app.js"
import { type Browser, expectStatus, formFields, navigate, newBrowser, pressConfirm, pressConnect, returnFromGithub, submit } from "./BrowserJar.js"
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

const hostLoginOf = (session: string) => Effect.map(call("GET", "/my/account", { token: session }), (r) => r.json.host_login as string | null)

/** "Connect GitHub" pressed in `browser`; returns GitHub's authorize URL. */
const start = (browser: Browser) =>
  Effect.map(pressConnect(browser), (reply) => {
    const started = expectStatus(reply, 303)
    expect(started.headers["cache-control"]).toBe("no-store")
    return new URL(started.headers["location"]!)
  })

/** Start → GitHub (approved by `login`) → callback: the confirmation page. */
const toConfirmation = (browser: Browser, login: string) =>
  Effect.flatMap(start(browser), (authorize) => returnFromGithub(browser, gh.authorize(authorize.href, login)))

const tokenExchanges = () => gh.callsTo("/login/oauth/access_token").length

describe("code-host connection (GitHub OAuth web flow, bound to the browser, PKCE, confirmed)", () => {
  layer(GithubTestApp())((it) => {
    it.effect("start → GitHub → callback → confirm stores the verified login; the owner page is then claimed", () =>
      Effect.gen(function*() {
        const session = yield* signIn("octo-owner@example.com")
        const tagline = yield* call("PATCH", "/my/account", { token: session, body: { storefront_tagline: "Widgets since 2024" } })
        expect(tagline.status, tagline.text).toBe(200)
        expect((yield* call("GET", "/r/octo-org")).json).toMatchObject({ claimed: false, storefront_tagline: null })
        const browser = newBrowser(session)

        const authorize = yield* start(browser)
        expect(`${authorize.origin}${authorize.pathname}`).toBe(`${WEB}/login/oauth/authorize`)
        expect(authorize.searchParams.get("client_id")).toBe("oauth-client-id")
        expect(authorize.searchParams.get("redirect_uri")).toBe(`${BASE_URL}/auth/host/callback`)
        expect(authorize.searchParams.get("prompt")).toBe("select_account")
        expect(authorize.searchParams.has("scope")).toBe(false)
        expect(authorize.searchParams.get("code_challenge_method")).toBe("S256")
        expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(authorize.searchParams.has("code_verifier")).toBe(false)
        const state = authorize.searchParams.get("state")!
        expect(state.length).toBeGreaterThan(40)
        expect(state).not.toContain("acct_")
        // The browser now holds the flow's nonce: short-lived, HttpOnly, SameSite=Lax, scoped to /auth/host.
        const nonceCookie = browser.setCookies.find((c) => c.startsWith("rm_host_connect="))!
        expect(nonceCookie).toMatch(/HttpOnly/i)
        expect(nonceCookie).toMatch(/SameSite=Lax/i)
        expect(nonceCookie).toMatch(/Path=\/auth\/host(;|$)/i)
        expect(nonceCookie).toMatch(/Max-Age=600/i)
        const nonce = browser.cookies.get("rm_host_connect")!
        expect(authorize.href).not.toContain(nonce)

        // The seller approves on GitHub, which redirects the browser back; the page asks to confirm.
        const page = expectStatus(yield* returnFromGithub(browser, gh.authorize(authorize.href, "Octo-Org")), 200)
        expect(page.headers["content-type"]).toMatch(/^text\/html/)
        expect(page.text).toContain("Octo-Org")
        expect(page.text).toContain("octo-owner@example.com")
        expect(yield* hostLoginOf(session)).toBeNull()
        expect(gh.pkceVerified).toBe(1)

        const done = expectStatus(yield* pressConfirm(browser, page), 303)
        expect(done.headers["location"]).toBe("/dashboard?done=host_connected#code-host")
        expect(browser.cookies.has("rm_host_connect")).toBe(false)
        expect(yield* hostLoginOf(session)).toBe("Octo-Org")
        expect((yield* call("GET", "/r/octo-org")).json).toMatchObject({ owner: "Octo-Org", claimed: true, storefront_tagline: "Widgets since 2024" })

        // GitHub's token went only to GitHub, and is in no answer of ours.
        const user = gh.calls.find((c) => c.url.pathname === "/user")!
        const oauthToken = user.authorization!.replace(/^Bearer /, "")
        expect(oauthToken).toMatch(/^gho_/)
        for (const text of [page.text, done.text, (yield* navigate(browser, "/dashboard")).text, (yield* call("GET", "/my/account", { token: session })).text]) {
          expect(text).not.toContain(oauthToken)
          expect(text).not.toContain(nonce)
        }
      }))

    it.effect("an attacker's authorization link, finished in the victim's browser, connects nothing", () =>
      Effect.gen(function*() {
        const attacker = yield* signInWithKey("attacker@example.com")
        const victim = yield* signIn("victim@example.com")
        // The attacker makes authorization links every way the server offers: headless with its API key or its
        // bearer session, and from its own signed-in browser.
        const links: Array<string> = []
        for (const token of [attacker.key, attacker.session]) {
          const headless = yield* call("GET", "/auth/host/start", { token })
          if (headless.status === 302) links.push(headless.headers["location"]!)
        }
        const fromBrowser = yield* pressConnect(newBrowser(attacker.session))
        if (fromBrowser?.status === 303) links.push(fromBrowser.headers["location"]!)
        expect(links.length).toBeGreaterThan(0)

        for (const link of links) {
          // The victim, signed in to their own account or not, approves on GitHub; the browser comes back.
          for (const victimBrowser of [newBrowser(victim), newBrowser()]) {
            const back = yield* returnFromGithub(victimBrowser, gh.authorize(link, "Victim-Login"))
            expect(back.status, back.text.slice(0, 300)).toBeGreaterThanOrEqual(400)
            expect(back.status).toBeLessThan(500)
            // Even a careless victim who presses whatever the page offers connects nothing.
            yield* pressConfirm(victimBrowser, back)
          }
        }
        expect(yield* hostLoginOf(attacker.session)).toBeNull()
        expect(yield* hostLoginOf(victim)).toBeNull()
        // The victim's code was never even exchanged.
        expect(tokenExchanges()).toBe(0)
      }))

    it.effect("a state is spent by its first callback: a second code for the same authorization is refused", () =>
      Effect.gen(function*() {
        const session = yield* signIn("replay@example.com")
        const browser = newBrowser(session)
        const authorize = yield* start(browser)
        const first = gh.authorize(authorize.href, "First-Login")
        const page = expectStatus(yield* returnFromGithub(browser, first), 200)
        // The same callback again, and the same authorization link approved once more on GitHub.
        for (const again of [first, gh.authorize(authorize.href, "Second-Login")]) {
          const replay = yield* returnFromGithub(browser, again)
          expect(replay.status, replay.text.slice(0, 300)).toBe(400)
          expect(replay.text).toContain("already been used")
        }
        expectStatus(yield* pressConfirm(browser, page), 303)
        expect(yield* hostLoginOf(session)).toBe("First-Login")
        // The confirmation is single-use too.
        const replayed = yield* submit(browser, "/auth/host/confirm", formFields(page.text, "/auth/host/confirm")!)
        expect(replayed.status).toBeGreaterThanOrEqual(400)
        expect(replayed.status).toBeLessThan(500)
        expect(tokenExchanges()).toBe(1)
        expect(yield* hostLoginOf(session)).toBe("First-Login")
      }))

    it.effect("a callback without the starting browser's cookie, with another's, for another account or expired is a 4xx", () =>
      Effect.gen(function*() {
        const session = yield* signIn("cookie-checker@example.com")
        const other = yield* signIn("other-account@example.com")
        const browser = newBrowser(session)
        const authorize = yield* start(browser)

        // Same account, a browser that did not start this flow (no nonce cookie, then its own).
        const elsewhere = newBrowser(session)
        expectStatus(yield* returnFromGithub(elsewhere, gh.authorize(authorize.href, "Someone")), 403)
        yield* start(elsewhere)
        expectStatus(yield* returnFromGithub(elsewhere, gh.authorize(authorize.href, "Someone")), 403)
        // The starting browser's cookie, but the session of another account.
        const swapped = newBrowser(other)
        swapped.cookies.set("rm_host_connect", browser.cookies.get("rm_host_connect")!)
        expectStatus(yield* returnFromGithub(swapped, gh.authorize(authorize.href, "Someone")), 403)
        // Signed out.
        const signedOut = newBrowser()
        signedOut.cookies.set("rm_host_connect", browser.cookies.get("rm_host_connect")!)
        expectStatus(yield* returnFromGithub(signedOut, gh.authorize(authorize.href, "Someone")), 401)
        // Missing, forged or tampered state.
        const code = gh.authorize(authorize.href, "Someone")
        for (const state of ["", "not-a-state", "v1.test.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA"]) {
          expectStatus(yield* navigate(browser, `/auth/host/callback?code=${code.searchParams.get("code")}&state=${state}`, "cross-site"), 400)
        }
        // The right browser, ten minutes later.
        yield* TestClock.adjust("11 minutes")
        expectStatus(yield* returnFromGithub(browser, gh.authorize(authorize.href, "Someone")), 400)

        expect(tokenExchanges()).toBe(0)
        expect(yield* hostLoginOf(session)).toBeNull()
        expect(yield* hostLoginOf(other)).toBeNull()
      }))

    it.effect("the confirmation needs the same browser, its session and the CSRF token", () =>
      Effect.gen(function*() {
        const session = yield* signIn("confirmer@example.com")
        const browser = newBrowser(session)
        const page = expectStatus(yield* toConfirmation(browser, "Careful-Login"), 200)
        const fields = formFields(page.text, "/auth/host/confirm")!
        expect(Object.keys(fields).sort()).toEqual(["confirmation", "csrf"])
        expectStatus(yield* submit(browser, "/auth/host/confirm", { ...fields, csrf: "0".repeat(64) }), 403)
        const otherBrowser = newBrowser(session)
        expectStatus(yield* submit(otherBrowser, "/auth/host/confirm", fields), 403)
        expect(yield* hostLoginOf(session)).toBeNull()
        expectStatus(yield* pressConfirm(browser, page), 303)
        expect(yield* hostLoginOf(session)).toBe("Careful-Login")
      }))

    it.effect("starting is a CSRF-checked POST from a signed-in browser: no GET, no API key, no cross-site form", () =>
      Effect.gen(function*() {
        const { key, session } = yield* signInWithKey("starter@example.com")
        for (const token of [key, session]) {
          const reply = yield* call("GET", "/auth/host/start", { token })
          expect(reply.status).toBe(405)
          expect(reply.headers["allow"]).toBe("POST")
          expect(reply.json.code).toBe("method_not_allowed")
        }
        expectStatus(yield* call("POST", "/auth/host/start", { token: key }), 401)
        const browser = newBrowser(session)
        expectStatus(yield* submit(browser, "/auth/host/start", {}), 403)
        const fields = formFields((yield* navigate(browser, "/dashboard")).text, "/auth/host/start")!
        const crossSite = yield* call("POST", "/auth/host/start", {
          raw: new URLSearchParams(fields).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: `rm_session=${session}`, origin: "https://evil.example", "sec-fetch-site": "cross-site" }
        })
        expectStatus(crossSite, 403)
        expect(browser.cookies.has("rm_host_connect")).toBe(false)
        expect(gh.calls).toHaveLength(0)
      }))

    it.effect("a refused code or a declined authorization is a 400 and spends the start", () =>
      Effect.gen(function*() {
        const session = yield* signIn("decliner@example.com")
        const browser = newBrowser(session)
        const authorize = yield* start(browser)
        const state = authorize.searchParams.get("state")!
        expectStatus(yield* navigate(browser, `/auth/host/callback?${new URLSearchParams({ error: "access_denied", state })}`, "cross-site"), 400)
        const again = yield* start(browser)
        expectStatus(yield* navigate(browser, `/auth/host/callback?${new URLSearchParams({ code: "never-issued", state: again.searchParams.get("state")! })}`, "cross-site"), 400)
        expect(yield* hostLoginOf(session)).toBeNull()
      }))

    it.effect("a login belongs to one account: a newer confirmed proof moves it", () =>
      Effect.gen(function*() {
        const first = yield* signIn("first-claimant@example.com")
        const second = yield* signIn("second-claimant@example.com")
        for (const session of [first, second]) {
          const browser = newBrowser(session)
          expectStatus(yield* pressConfirm(browser, yield* toConfirmation(browser, "Shared-Login")), 303)
        }
        expect(yield* hostLoginOf(first)).toBeNull()
        expect(yield* hostLoginOf(second)).toBe("Shared-Login")
      }))
  })

  layer(GithubTestApp({}))((it) => {
    it.effect("without GITHUB_CLIENT_ID/GITHUB_CLIENT_SECRET start and callback answer 503 not_configured", () =>
      Effect.gen(function*() {
        const session = yield* signIn("unconfigured@example.com")
        const browser = newBrowser(session)
        const dashboard = yield* navigate(browser, "/dashboard")
        expect(formFields(dashboard.text, "/auth/host/start")).toBeUndefined()
        const started = yield* call("POST", "/auth/host/start", {
          raw: "csrf=x",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: `rm_session=${session}` }
        })
        const back = yield* call("GET", "/auth/host/callback?code=x&state=y", { headers: { cookie: `rm_session=${session}` } })
        for (const reply of [started, back]) {
          expect(reply.status).toBe(503)
          expect(reply.json.code).toBe("not_configured")
          expect(reply.json.detail).toContain("GITHUB_CLIENT_ID")
        }
        expect(gh.calls).toHaveLength(0)
      }))
  })
})

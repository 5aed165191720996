import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { BASE_URL, BASE_WALLET, BASE_WALLET_2, call, checkoutIdOf, TestApp } from "../support/app.js"
import { expectCurrent, expectGone, expectProblem, magicToken, storesOf, WIDGET_URL } from "../support/flows.js"
import {
  browserSignIn,
  dashboardOf,
  expectPage,
  expectSeeOther,
  formPost,
  htmlGet,
  sessionCookieOf,
  TestAppWith
} from "../support/pages.js"

const DAY_S = 24 * 60 * 60
/** The cookie's value is the session itself: the same credential works as a bearer on the JSON API. */
const bearerOf = (cookie: string) => cookie.slice(cookie.indexOf("=") + 1)

describe("browser sign-in: the emailed link's form sets the session cookie", () => {
  layer(TestApp())((it) => {
    it.effect("POST /auth/verify from the page: 303 to /dashboard with an HttpOnly, SameSite=Lax cookie for 30 days", () =>
      Effect.gen(function*() {
        const { cookie, setCookie } = yield* browserSignIn("cookie@example.com")
        const attributes = setCookie.split(";").map((a) => a.trim().toLowerCase())
        expect(attributes).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/", `max-age=${30 * DAY_S}`]))
        // BASE_URL is http here: no Secure (the browser would drop it), no __Host- prefix.
        expect(attributes).not.toContain("secure")
        expect(cookie).toMatch(/^rm_session=[A-Za-z0-9_-]{43}$/)
        const { text } = yield* dashboardOf(cookie)
        expect(text).toContain(`<span class="who">cookie@example.com</span>`)
        // The same session is a bearer credential.
        expect((yield* call("GET", "/my/account", { token: bearerOf(cookie) })).json.email).toBe("cookie@example.com")
      }))

    it.effect("JSON callers of /auth/verify keep getting JSON and no cookie", () =>
      Effect.gen(function*() {
        const json = yield* call("POST", "/auth/verify", { body: { token: yield* magicToken("json@example.com") } })
        expect(json.status).toBe(200)
        expect(json.json.token_type).toBe("Bearer")
        expect(json.headers["set-cookie"]).toBeUndefined()
        // A form body from a client that does not ask for HTML is still answered as the API.
        const form = yield* call("POST", "/auth/verify", {
          raw: `token=${encodeURIComponent(yield* magicToken("json@example.com"))}`,
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }
        })
        expect(form.status).toBe(200)
        expect(form.headers["set-cookie"]).toBeUndefined()
      }))

    it.effect("a used or unknown link is a readable 401 page offering a new link; no cookie is set", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("used@example.com")
        yield* browserSignIn("other@example.com")
        expectSeeOther(yield* formPost("/auth/verify", { token }), "/dashboard")
        for (const t of [token, "A".repeat(43)]) {
          const reply = yield* formPost("/auth/verify", { token: t })
          const page = expectPage(reply, 401)
          expect(page).toContain("The sign-in link is invalid, used or expired")
          expect(page).toContain(`<a href="/signin">`)
          expect(page).not.toContain(t)
          expect(reply.headers["set-cookie"]).toBeUndefined()
        }
      }))

    it.effect("a cross-site post of the link's form is refused (login CSRF) and leaves the token usable", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("victim@example.com")
        for (const headers of [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }]) {
          const reply = yield* formPost("/auth/verify", { token }, undefined, headers)
          expectPage(reply, 403)
          expect(reply.headers["set-cookie"]).toBeUndefined()
        }
        // The page's strict-origin referrer policy lets a browser send our origin (Origin: null is refused).
        const ok = yield* formPost("/auth/verify", { token }, undefined, { origin: BASE_URL, "sec-fetch-site": "same-origin" })
        expectSeeOther(ok, "/dashboard")
      }))

    it.effect("GET /signin asks for an email; POST says 'check your mail' and sends the link; a bad email is a readable 400", () =>
      Effect.gen(function*() {
        const form = expectPage(yield* htmlGet("/signin"), 200)
        expect(form).toContain(`<form method="post" action="/signin">`)
        const before = (yield* Effect.flatMap(SentMail, (m) => m.all)).length
        const sent = expectPage(yield* formPost("/signin", { email: "New.Seller@example.com" }), 200)
        expect(sent).toContain("Check your mail")
        expect(sent).toContain("New.Seller@example.com")
        const mails = yield* Effect.flatMap(SentMail, (m) => m.all)
        expect(mails.length).toBe(before + 1)
        expect(mails.at(-1)!.to).toBe("new.seller@example.com")
        expect(mails.at(-1)!.text).toContain(`${BASE_URL}/auth/verify?token=`)

        // Posted from another site: refused, no mail.
        expectPage(yield* formPost("/signin", { email: "victim@example.com" }, undefined, { "sec-fetch-site": "cross-site" }), 403)
        expectPage(yield* formPost("/signin", { email: "victim@example.com" }, undefined, { origin: "https://evil.example" }), 403)
        expect((yield* Effect.flatMap(SentMail, (m) => m.all)).length).toBe(before + 1)

        const bad = expectPage(yield* formPost("/signin", { email: "<b>not-an-email</b>" }), 400)
        expect(bad).toContain(`data-code="invalid_request"`)
        expect(bad).toContain(`value="&lt;b&gt;not-an-email&lt;/b&gt;"`)
        expect((yield* Effect.flatMap(SentMail, (m) => m.all)).length).toBe(before + 1)
        // Signed in already: straight to the dashboard.
        const { cookie } = yield* browserSignIn("already@example.com")
        expectSeeOther(yield* htmlGet("/signin", cookie), "/dashboard")
      }))
  })
})

describe("browser sign-in under an https BASE_URL", () => {
  layer(TestAppWith(Layer.succeed(PublicOrigin, { baseUrl: "https://repomarket.test" })))((it) => {
    it.effect("the cookie is Secure and __Host- prefixed", () =>
      Effect.gen(function*() {
        const { cookie, setCookie } = yield* browserSignIn("secure@example.com")
        expect(cookie).toMatch(/^__Host-rm_session=/)
        const attributes = setCookie.split(";").map((a) => a.trim().toLowerCase())
        expect(attributes).toEqual(expect.arrayContaining(["secure", "httponly", "samesite=lax", "path=/"]))
        expect(attributes.some((a) => a.startsWith("domain="))).toBe(false)
        yield* dashboardOf(cookie)
      }))
  })
})

describe("the dashboard's session and CSRF defences", () => {
  layer(TestApp())((it) => {
    it.effect("without a live session cookie /dashboard and its actions redirect to /signin", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("keyholder@example.com")
        const key = (yield* call("POST", "/my/keys", { token: bearerOf(cookie) })).json.key as string
        for (const bad of [undefined, "rm_session=garbage", `rm_session=${key}`, "other=1"]) {
          expectSeeOther(yield* htmlGet("/dashboard", bad), "/signin")
          expectSeeOther(yield* formPost("/dashboard/keys", { csrf: "x" }, bad), "/signin")
        }
      }))

    it.effect("the cookie never authenticates the JSON API (bearer only, so it needs no CSRF defence)", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("api@example.com")
        for (const [method, path] of [["GET", "/my/account"], ["POST", "/my/keys"], ["GET", "/my/sales"]] as const) {
          const reply = yield* call(method, path, { headers: { cookie } })
          expectProblem(reply, 401, "unauthenticated")
        }
      }))

    it.effect("a form needs this session's CSRF token and our own origin; refused posts change nothing", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("csrf@example.com")
        const { csrf } = yield* dashboardOf(cookie)
        const other = yield* dashboardOf((yield* browserSignIn("someone-else@example.com")).cookie)
        expect(other.csrf).not.toBe(csrf)
        const refused: ReadonlyArray<readonly [string, Record<string, string>, Record<string, string>]> = [
          ["no token", {}, {}],
          ["a wrong token", { csrf: "0".repeat(64) }, {}],
          ["another session's token", { csrf: other.csrf }, {}],
          ["a cross-site Origin", { csrf }, { origin: "https://evil.example" }],
          ["an opaque Origin", { csrf }, { origin: "null" }],
          ["Sec-Fetch-Site: cross-site", { csrf }, { "sec-fetch-site": "cross-site" }],
          ["Sec-Fetch-Site: same-site", { csrf }, { "sec-fetch-site": "same-site" }]
        ]
        for (const [label, fields, headers] of refused) {
          for (const [path, extra] of [["/dashboard/keys", {}], ["/dashboard/account/tagline", { storefront_tagline: "pwned" }]] as const) {
            const reply = yield* formPost(path, { ...fields, ...extra }, cookie, headers)
            expect({ label, path, status: reply.status }).toEqual({ label, path, status: 403 })
            expect(reply.text).toContain("nothing was changed")
          }
        }
        const session = bearerOf(cookie)
        expect((yield* call("GET", "/my/keys", { token: session })).json.keys).toEqual([])
        expect((yield* call("GET", "/my/account", { token: session })).json.storefront_tagline).toBeNull()

        // With the token, from our own origin (as Chromium sends it): the key is created and shown once.
        const created = yield* formPost("/dashboard/keys", { csrf }, cookie, { origin: BASE_URL, "sec-fetch-site": "same-origin" })
        const page = expectPage(created, 200)
        const key = /<code class="secret" id="new-secret" data-copy>(rmkt_[A-Za-z0-9]+)<\/code>/.exec(page)?.[1]
        expect(key).toBeDefined()
        expect((yield* call("GET", "/my/account", { token: key! })).status).toBe(200)
        expect((yield* dashboardOf(cookie)).text).not.toContain(key!)
      }))

    it.effect("sign-out ends the session: the cookie is cleared and neither it nor its bearer works", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("leaving@example.com")
        const { csrf } = yield* dashboardOf(cookie)
        expectPage(yield* htmlGet("/signout", cookie), 200)
        expectPage(yield* formPost("/signout", {}, cookie), 403)
        const out = yield* formPost("/signout", { csrf }, cookie)
        expectPage(out, 200)
        expect(out.headers["set-cookie"]).toMatch(/^rm_session=; Max-Age=0;/)
        const stale = expectSeeOther(yield* htmlGet("/dashboard", cookie), "/signin")
        expect(stale.headers["set-cookie"]).toMatch(/^rm_session=; Max-Age=0;/)
        expectProblem(yield* call("GET", "/my/account", { token: bearerOf(cookie) }), 401, "unauthenticated")
      }))
  })
})

describe("dashboard actions go through the use cases", () => {
  layer(TestApp())((it) => {
    it.effect("list, reprice (the old checkout dies), token, takedown; failures are readable problems with the API's status", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("seller@example.com")
        const session = bearerOf(cookie)
        const { csrf } = yield* dashboardOf(cookie)
        const post = (path: string, fields: Record<string, string>) => formPost(path, { csrf, ...fields }, cookie)

        expectSeeOther(yield* post("/dashboard/listings", { host_url: WIDGET_URL, price_usd: "2.00", wallet_base: BASE_WALLET, wallet_solana: "", host_pat: "" }), "/dashboard?done=listed#listings")
        const first = (yield* storesOf(session))["Octo-Org/Widget"]
        expect(first).toMatchObject({ price_usd: "2.00", wallet_base: BASE_WALLET, wallet_solana: null, selling: true })
        const listedPage = (yield* htmlGet("/dashboard?done=listed", cookie)).text
        expect(listedPage).toContain("Listed. Its checkout is below.")
        expect(listedPage).toContain(first.checkout_url)

        expectSeeOther(yield* post("/dashboard/listings/price", { repo: "Octo-Org/Widget", price_usd: "0.75" }), "/dashboard?done=repriced#listings")
        const second = (yield* storesOf(session))["Octo-Org/Widget"]
        expect(second.price_usd).toBe("0.75")
        expect(checkoutIdOf(second.checkout_url)).not.toBe(checkoutIdOf(first.checkout_url))
        yield* expectGone(first.checkout_url, "/r/Octo-Org/Widget")
        yield* expectCurrent(second.checkout_url)

        // Failures: the same problem (status, code, detail) the JSON API would answer, on the dashboard.
        const failures: ReadonlyArray<readonly [string, Record<string, string>, number, string, string]> = [
          ["/dashboard/listings/price", { repo: "Octo-Org/Widget", price_usd: "12.345" }, 400, "invalid_request", "price_usd"],
          ["/dashboard/listings/price", { repo: "Octo-Org/Widget", price_usd: "" }, 400, "invalid_request", "enter a price such as 12.34"],
          ["/dashboard/listings", { host_url: "https://github.com/nobody-here/nothing" }, 422, "repo_not_found", "has no such repository"],
          ["/dashboard/listings", { host_url: "https://gitlab.com/a/b" }, 400, "invalid_request", "host_url"],
          ["/dashboard/listings/takedown", { repo: "Octo-Org/Gadget" }, 404, "not_found", "No live listing for Octo-Org/Gadget"],
          ["/dashboard/listings/token", { repo: "Octo-Org/Widget", host_pat: "" }, 400, "invalid_request", "paste the new access token"],
          ["/dashboard/keys/revoke", { id: "key_unknown" }, 404, "not_found", "No active API key"],
          ["/dashboard/account/wallets", { wallet_base: "0x123", wallet_solana: "" }, 400, "invalid_request", "wallet_base"],
          ["/dashboard/account/tagline", { storefront_tagline: "x".repeat(141) }, 400, "invalid_request", "storefront_tagline"]
        ]
        for (const [path, fields, status, code, words] of failures) {
          const page = expectPage(yield* post(path, fields), status)
          expect({ path, code: /data-code="([a-z_]+)"/.exec(page)?.[1] }).toEqual({ path, code })
          expect(page).toContain(words)
          // The dashboard is still there around the problem.
          expect(page).toContain(`<section id="listings">`)
        }
        const unchanged = (yield* storesOf(session))["Octo-Org/Widget"]
        expect(unchanged.checkout_url).toBe(second.checkout_url)

        // Wallets: only what changed is sent, so re-saving the form leaves every checkout alone.
        expectSeeOther(yield* post("/dashboard/account/wallets", { wallet_base: BASE_WALLET_2, wallet_solana: "" }), "/dashboard?done=wallets_saved#settings")
        expect((yield* storesOf(session))["Octo-Org/Widget"]).toMatchObject({ wallet_base: BASE_WALLET, checkout_url: second.checkout_url })
        expectSeeOther(yield* post("/dashboard/account/wallets", { wallet_base: BASE_WALLET_2, wallet_solana: "" }), "/dashboard?done=unchanged#settings")
        const account = (yield* call("GET", "/my/account", { token: session })).json
        expect(account).toMatchObject({ wallet_base: BASE_WALLET_2, wallet_solana: null })

        expectSeeOther(yield* post("/dashboard/account/tagline", { storefront_tagline: "Fine <tools>" }), "/dashboard?done=tagline_saved#settings")
        expect((yield* call("GET", "/my/account", { token: session })).json.storefront_tagline).toBe("Fine <tools>")
        expect((yield* htmlGet("/dashboard", cookie)).text).toContain(`value="Fine &lt;tools&gt;"`)

        expectSeeOther(yield* post("/dashboard/listings/takedown", { repo: "Octo-Org/Widget" }), "/dashboard?done=taken_down#listings")
        yield* expectGone(second.checkout_url, "/r/Octo-Org/Widget")
        expectPage(yield* htmlGet("/r/Octo-Org/Widget"), 404)
        expect(yield* storesOf(session)).toEqual({})
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_URL, call, TestApp } from "../support/app.js"
import { magicToken } from "../support/flows.js"
import { browserSignIn, dashboardOf, expectPage, expectSeeOther, formPost, htmlGet } from "../support/pages.js"

/**
 * Issue 12, finding 9: the sign-in link's form (`POST /auth/verify` from a browser) and the dashboard's forms
 * refuse `Origin: null` and every origin other than BASE_URL's, with or without `Sec-Fetch-Site` (older
 * browsers send no Sec-Fetch-Site; a sandboxed frame or a data: page sends `Origin: null`). The link's page
 * therefore must let the browser send our real origin: its referrer policy sends the origin, never the URL.
 */
describe("login CSRF on the sign-in link's form", () => {
  layer(TestApp())((it) => {
    it.effect("Origin: null is refused without Sec-Fetch-Site (older browsers) and with it; the token stays usable", () =>
      Effect.gen(function*() {
        const token = yield* magicToken("victim@example.com")
        const refused: ReadonlyArray<Record<string, string>> = [
          { origin: "null" },
          { origin: "null", "sec-fetch-site": "same-origin" },
          { origin: `${BASE_URL}.evil.example` },
          { origin: "http://evil.example" }
        ]
        for (const headers of refused) {
          const reply = yield* formPost("/auth/verify", { token }, undefined, headers)
          expect({ headers, status: reply.status }).toEqual({ headers, status: 403 })
          expectPage(reply, 403)
          expect(reply.headers["set-cookie"]).toBeUndefined()
        }
        // As a current browser sends it from the link's page: our own origin.
        expectSeeOther(yield* formPost("/auth/verify", { token }, undefined, { origin: BASE_URL, "sec-fetch-site": "same-origin" }), "/dashboard")
      }))

    it.effect("the link's page lets the browser send its origin (not null) and never the URL with the token", () =>
      Effect.gen(function*() {
        const reply = yield* htmlGet("/auth/verify?token=abc")
        expectPage(reply, 200)
        expect(reply.headers["referrer-policy"]).toBe("strict-origin")
      }))

    it.effect("a dashboard form with this session's CSRF token but Origin: null is refused and changes nothing", () =>
      Effect.gen(function*() {
        const { cookie } = yield* browserSignIn("seller@example.com")
        const { csrf } = yield* dashboardOf(cookie)
        for (const headers of [{ origin: "null" }, { origin: "null", "sec-fetch-site": "same-origin" }]) {
          const reply = yield* formPost("/dashboard/account/tagline", { csrf, storefront_tagline: "pwned" }, cookie, headers)
          expect(reply.status).toBe(403)
        }
        const session = decodeURIComponent(cookie.split("=")[1]!)
        expect((yield* call("GET", "/my/account", { token: session })).json.storefront_tagline).toBeNull()
      }))
  })
})

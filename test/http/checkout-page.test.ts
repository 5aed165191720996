import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_WALLET, call, SOLANA_WALLET, TestApp } from "../support/app.js"
import { listed, WIDGET_URL } from "../support/flows.js"
import { withStableOffers } from "../support/offers.js"

/** The decoded `PAYMENT-REQUIRED` object without the Sign-In-With-X nonce and times, which are fresh per answer. */
const required = (header: string | undefined) => {
  expect(header).toBeDefined()
  const value = JSON.parse(Buffer.from(header!, "base64").toString("utf8"))
  const info = value.extensions?.["sign-in-with-x"]?.info
  if (info !== undefined) for (const k of ["nonce", "issuedAt", "expirationTime", "notBefore"]) delete info[k]
  return withStableOffers(value)
}

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
/** What x402 clients send: fetch's default (`@x402/fetch`, `x402-fetch`, curl), JSON, or nothing at all. */
const CLIENT_ACCEPTS = [undefined, "*/*", "application/json", "application/json, text/plain, */*"]

/** One listing for the whole app (a repo is listed once); live payments through a facilitator nobody calls for a 402 on Base. */
let listing: { checkout_url: string; test_checkout_url: string } | undefined
const widget = Effect.suspend(() =>
  listing !== undefined
    ? Effect.succeed(listing)
    : Effect.tap(listed({ host_url: WIDGET_URL, price_usd: "3.50", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET }), (l) => void (listing = l)))

describe("the checkout page (a browser asking a checkout URL)", () => {
  layer(TestApp({ responseCacheMs: 2000, config: { X402_FACILITATOR_URL: "http://127.0.0.1:9" } }))((it) => {
    it.effect("x402 clients get the same 402 as before: JSON v1 body byte for byte, the same headers, no page", () =>
      Effect.gen(function*() {
        const created = yield* widget
        for (const url of [created.checkout_url, created.test_checkout_url]) {
          const path = new URL(url).pathname
          const replies = []
          for (const accept of CLIENT_ACCEPTS) {
            replies.push(yield* call("GET", path, accept === undefined ? {} : { headers: { accept } }))
          }
          const [first] = replies
          expect(first!.status).toBe(402)
          expect(first!.headers["content-type"]).toBe("application/json")
          expect(first!.json.x402Version).toBe(1)
          // Live: Base only (this stand-in facilitator names no Solana fee payer); test: both chains.
          expect(first!.json.accepts).toHaveLength(url === created.checkout_url ? 1 : 2)
          for (const r of replies) {
            expect(r.status).toBe(402)
            expect(r.text).toBe(first!.text)
            expect(Object.keys(r.headers).sort()).toEqual(["cache-control", "connection", "content-length", "content-type", "date", "link", "payment-required", "x-request-id"])
            expect(required(r.headers["payment-required"])).toEqual(required(first!.headers["payment-required"]))
            expect(r.text).not.toMatch(/<html/i)
          }
        }
      }))

    it.effect("a browser gets the page: still 402, the same PAYMENT-REQUIRED, a strict CSP that lets the script reach only this origin", () =>
      Effect.gen(function*() {
        const created = yield* widget
        const path = new URL(created.test_checkout_url).pathname
        const json = yield* call("GET", path)
        const page = yield* call("GET", path, { headers: { accept: BROWSER_ACCEPT } })
        expect(page.status).toBe(402)
        expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
        expect(required(page.headers["payment-required"])).toEqual(required(json.headers["payment-required"]))
        expect(page.headers["cache-control"]).toBe("no-store")
        expect(page.headers["link"]).toBe(json.headers["link"])
        expect(page.headers["vary"]).toBe("Accept")
        const csp = page.headers["content-security-policy"]!
        const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1]
        expect(nonce).toBeDefined()
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("connect-src 'self'")
        expect(csp).toContain("require-trusted-types-for 'script'")
        expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/)
        // Every script is an external file of ours, loaded by this answer's nonce; no inline script, no handler.
        const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
        expect(scripts.length).toBeGreaterThan(0)
        for (const [, attrs, body] of scripts) {
          expect(body).toBe("")
          expect(attrs).toContain(`nonce="${nonce}"`)
          expect(attrs).toMatch(/src="\/assets\//)
        }
        expect(page.text).not.toMatch(/\son[a-z]+=/i)
        // What it sells, to whom the money goes, that it is simulated, and how to pay without a browser wallet.
        expect(page.text).toContain("Buy Octo-Org/Widget")
        expect(page.text).toContain("$3.50")
        expect(page.text).toContain(BASE_WALLET)
        expect(page.text).toContain(SOLANA_WALLET)
        expect(page.text).toContain("Base Sepolia (test network)")
        expect(page.text).toContain("Solana devnet (test network)")
        expect(page.text).toContain("Test checkout: simulated money.")
        expect(page.text).toContain("<noscript>")
        expect(page.text).toContain("Pay with an x402 client")
        // The page is never remembered by the front door: every answer has its own nonce.
        const again = yield* call("GET", path, { headers: { accept: BROWSER_ACCEPT } })
        expect(again.headers["content-security-policy"]).not.toBe(csp)
        // And the JSON answer for agents was not replaced by the page in the front door either.
        const after = yield* call("GET", path)
        expect(after.text).toBe(json.text)
      }))

    it.effect("the page's script and stylesheet are served under content-hashed names, immutable, within the size budget", () =>
      Effect.gen(function*() {
        const created = yield* widget
        const page = yield* call("GET", new URL(created.test_checkout_url).pathname, { headers: { accept: "text/html" } })
        const assets = [...page.text.matchAll(/(?:src|href)="(\/assets\/checkout-[0-9a-f]{16}\.(?:js|css))"/g)].map((m) => m[1]!)
        expect(assets).toHaveLength(2)
        for (const asset of assets) {
          const res = yield* call("GET", asset)
          expect(res.status).toBe(200)
          expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
          expect(res.headers["content-type"]).toMatch(asset.endsWith(".js") ? /^text\/javascript/ : /^text\/css/)
          if (asset.endsWith(".js")) {
            const { gzipSync } = yield* Effect.promise(() => import("node:zlib"))
            expect(gzipSync(res.text).byteLength).toBeLessThanOrEqual(150 * 1024)
          }
        }
        // Another hash is nothing.
        expect((yield* call("GET", "/assets/checkout-0000000000000000.js")).status).toBe(404)
      }))

    it.effect("the live checkout page says it takes real money and points to the rehearsal; the repo page has a Buy action", () =>
      Effect.gen(function*() {
        const created = yield* widget
        const repo = yield* call("GET", "/r/Octo-Org/Widget", { headers: { accept: "text/html" } })
        expect(repo.text).toContain(`href="${created.checkout_url}" id="buy-now">Buy for $3.50</a>`)
        expect(repo.text).toContain(`href="${created.test_checkout_url}"`)
        const live = yield* call("GET", new URL(created.checkout_url).pathname, { headers: { accept: "text/html" } })
        expect(live.status).toBe(402)
        expect(live.text).not.toContain("Test checkout: simulated money.")
        expect(live.text).toContain("The repository's default branch as a <code>.tar.gz</code>")
        expect(live.text).toContain(`<code class="url" id="test-url">${created.test_checkout_url}</code>`)
      }))

    it.effect("a checkout that cannot be paid is a page for a browser (same status) and still problem+json for clients", () =>
      Effect.gen(function*() {
        for (const path of ["/checkout/chk_doesnotexist0000", "/checkout/chk_doesnotexist0000/test"]) {
          const page = yield* call("GET", path, { headers: { accept: BROWSER_ACCEPT } })
          expect(page.status).toBe(404)
          expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
          expect(page.text).toContain("No such checkout.")
          expect(page.headers["content-security-policy"]).toContain("script-src 'none'")
          const json = yield* call("GET", path)
          expect(json.status).toBe(404)
          expect(json.headers["content-type"]).toBe("application/problem+json")
          expect(json.json.code).toBe("not_found")
        }
      }))
  })
})

import { HttpServerResponse } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, ConfigProvider, Effect, Exit, Layer, Schedule } from "effect"
import { CodeHostMemoryControl } from "../../adapters/memory/CodeHostMemory.js"
import { FrontDoor, FrontDoorLive, makeFrontDoor } from "../../app/FrontDoor.js"
import { BASE_WALLET, call, TestApp, PUBLIC_REPO, type Reply, signInWithKey, SOLANA_WALLET } from "../support/app.js"
import { expectProblem, listed, WIDGET_URL } from "../support/flows.js"
import { withStableOffers } from "../support/offers.js"

/*
 * The front door answers repo-page JSON and 402 challenges from memory, before the app. What it serves must
 * be, byte for byte, what the app itself answers now: the oracle here is the same request with a query
 * string, which the front door never serves (the app ignores the query on these routes).
 */

const PAGE = "/r/Octo-Org/Widget"
const JSON_ACCEPT = { accept: "application/json" }

const stats = Effect.map(FrontDoor, (door) => door.stats())

/**
 * A 402's Sign-In-With-X challenge is fresh on every answer the app makes (x402 names its nonce, issuedAt and
 * expirationTime dynamic); a remembered one stays valid (the nonce is stateless, see SiwxNonce). Those three
 * fields are compared for form, not value.
 */
const withoutFreshChallenge = (header: string | undefined) => {
  if (header === undefined) return header
  const required = JSON.parse(Buffer.from(header, "base64").toString("utf8"))
  const info = required.extensions?.["sign-in-with-x"]?.info
  if (info === undefined) return header
  expect(info.nonce).toMatch(/^[0-9a-f]{88}$/)
  expect(Date.parse(info.expirationTime) - Date.parse(info.issuedAt)).toBe(5 * 60 * 1000)
  return JSON.stringify(withStableOffers({ ...required, extensions: { ...required.extensions, "sign-in-with-x": { ...required.extensions["sign-in-with-x"], info: { ...info, nonce: "<fresh>", issuedAt: "<fresh>", expirationTime: "<fresh>" } } } }))
}

/** A body as a client compares it: a 402's v1 body with its signed offers compared for what they offer. */
const stableText = (text: string) => {
  if (!text.startsWith("{")) return text
  const body = JSON.parse(text)
  return body.x402Version === 1 ? JSON.stringify(withStableOffers(body)) : text
}

/** Status, headers (but the date and the request's own id) and body: what a client would compare. */
const shape = (reply: Reply) => {
  const { date: _date, "x-request-id": _id, ...headers } = reply.headers
  const required = withoutFreshChallenge(headers["payment-required"])
  return { status: reply.status, headers: required === undefined ? headers : { ...headers, "payment-required": required }, text: stableText(reply.text) }
}

const get = (path: string, headers: Record<string, string> = JSON_ACCEPT) => call("GET", path, { headers })

/** The app's own answer to `path` right now (the query string keeps the front door out of it). */
const appAnswer = (path: string, headers: Record<string, string> = JSON_ACCEPT) =>
  Effect.map(get(`${path}?oracle=${Math.random().toString(36).slice(2)}`, headers), shape)

/** Asserts the answer to `path` equals the app's own, and returns it. */
const expectSameAsApp = (path: string, headers: Record<string, string> = JSON_ACCEPT) =>
  Effect.gen(function*() {
    const served = yield* get(path, headers)
    expect(shape(served)).toEqual(yield* appAnswer(path, headers))
    return served
  })

const pathOf = (url: string) => new URL(url).pathname

/**
 * Each test below runs in an app of its own with the widget on sale (5.00 on Base, by front@example.com), so
 * none depends on what an earlier test listed, repriced or took down. Returns the seller's key.
 */
const onItsOwnWidget = <A, E, R>(test: (key: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { key } = yield* signInWithKey("front@example.com")
    yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, key)
    return yield* test(key)
  }).pipe(Effect.provide(TestApp()))

describe("the front door, as `npm start` serves", () => {
  layer(TestApp())((it) => {
    it.effect("answers a repeated repo-page JSON request from memory, with the app's exact status, headers and bytes", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("front@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, key)
        const before = yield* stats
        const first = yield* get(PAGE)
        expect(first.status).toBe(200)
        expect(first.json).toMatchObject({ repo: "Octo-Org/Widget", price_usd: "5.00" })
        expect((yield* stats).remembered).toBe(before.remembered + 1)

        const second = yield* get(PAGE)
        expect((yield* stats).hits).toBe(before.hits + 1)
        expect(shape(second)).toEqual(shape(first))
        expect(shape(second)).toEqual(yield* appAnswer(PAGE))
      }))

    it.effect("answers a repeated 402 challenge from memory, PAYMENT-REQUIRED and body exactly as the app's", () =>
      onItsOwnWidget(() => Effect.gen(function*() {
        const page = yield* get(PAGE)
        const checkout = pathOf(page.json.test_checkout_url)
        const first = yield* get(checkout, {})
        expect(first.status).toBe(402)
        expect(first.headers["payment-required"]).toBeDefined()
        const hits = (yield* stats).hits
        const second = yield* get(checkout, {})
        expect((yield* stats).hits).toBe(hits + 1)
        expect(shape(second)).toEqual(shape(first))
        expect(shape(second)).toEqual(yield* appAnswer(checkout, {}))
      })))

    it.effect("keeps serving its answer while the code host is down, within the answer's lifetime", () =>
      onItsOwnWidget(() => Effect.gen(function*() {
        const control = yield* CodeHostMemoryControl
        const first = yield* get(PAGE)
        yield* control.setDown("unavailable")
        const calls = yield* control.calls
        const during = yield* get(PAGE).pipe(Effect.ensuring(control.setDown(null)))
        expect(shape(during)).toEqual(shape(first))
        expect(yield* control.calls).toBe(calls)
      })))

    it.effect("never answers a request carrying a payment: the app reads it (here: refuses a malformed one)", () =>
      onItsOwnWidget(() => Effect.gen(function*() {
        const checkout = pathOf((yield* get(PAGE)).json.test_checkout_url)
        yield* get(checkout, {})
        const hits = (yield* stats).hits
        const paid = yield* get(checkout, { "payment-signature": "not-a-payment" })
        expectProblem(paid, 400, "invalid_request")
        const v1 = yield* get(checkout, { "x-payment": "not-a-payment" })
        expectProblem(v1, 400, "invalid_request")
        expect((yield* stats).hits).toBe(hits)
      })))

    it.effect("never answers the HTML page (each carries its own CSP nonce), HEAD, or a path it does not know", () =>
      onItsOwnWidget(() => Effect.gen(function*() {
        const hits = (yield* stats).hits
        const a = yield* get(PAGE, { accept: "text/html" })
        const b = yield* get(PAGE, { accept: "text/html" })
        expect(a.status).toBe(200)
        expect(a.headers["content-security-policy"]).toMatch(/nonce-/)
        expect(a.headers["content-security-policy"]).not.toBe(b.headers["content-security-policy"])
        yield* get(`${PAGE}/`)
        yield* get(`${PAGE}/`)
        yield* get("/r/Octo-Org")
        yield* get("/r/Octo-Org")
        expect((yield* stats).hits).toBe(hits)
      })))

    it.effect("a reprice is visible on the very next request: the old 402 becomes 410, the page shows the new price", () =>
      onItsOwnWidget((key) => Effect.gen(function*() {
        const old = yield* get(PAGE)
        const oldCheckout = pathOf(old.json.test_checkout_url)
        yield* get(oldCheckout, {})
        yield* get(oldCheckout, {})

        const repriced = yield* call("PATCH", "/repos/Octo-Org/Widget", { token: key, body: { price_usd: "7.25" } })
        expect(repriced.status).toBe(200)
        expectProblem(yield* get(oldCheckout, {}), 410, "checkout_gone")
        const page = yield* expectSameAsApp(PAGE)
        expect(page.json).toMatchObject({ price_usd: "7.25" })
        const fresh = yield* get(pathOf(page.json.test_checkout_url), {})
        expect(fresh.status).toBe(402)
        expect(fresh.json.accepts[0].maxAmountRequired).toBe("7250000")
      })))

    it.effect("an account's new default wallet is visible on the very next request (the listing takes it, a new checkout)", () =>
      onItsOwnWidget((key) => Effect.gen(function*() {
        const before = yield* get(PAGE)
        expect(before.json.chains).toEqual(["base"])
        const checkout = pathOf(before.json.test_checkout_url)
        yield* get(checkout, {})

        // A listing lacking a Solana wallet takes the account's new default (a new checkout; the old one is void).
        const changed = yield* call("PATCH", "/my/account", { token: key, body: { wallet_solana: SOLANA_WALLET } })
        expect(changed.status).toBe(200)
        const page = yield* expectSameAsApp(PAGE)
        expect(page.json.chains).toEqual(["base", "solana"])
        expectProblem(yield* get(checkout, {}), 410, "checkout_gone")
        const answer = yield* expectSameAsApp(pathOf(page.json.test_checkout_url), {})
        expect(answer.status).toBe(402)
        expect(answer.json.accepts.map((a: { network: string }) => a.network).sort()).toEqual(["base-sepolia", "solana-devnet"])
      })))

    it.effect("a takedown is visible on the very next request: page 404, checkout 410", () =>
      onItsOwnWidget((key) => Effect.gen(function*() {
        const page = yield* get(PAGE)
        const checkout = pathOf(page.json.test_checkout_url)
        yield* get(checkout, {})
        yield* get(PAGE)
        const down = yield* call("DELETE", "/repos/Octo-Org/Widget", { token: key })
        expect(down.status).toBeLessThan(300)
        expectProblem(yield* get(PAGE), 404, "not_found")
        expectProblem(yield* get(checkout, {}), 410, "checkout_gone")
      })))
  })
})

describe("the front door's answers expire", () => {
  layer(TestApp({ responseCacheMs: 3000 }))((it) => {
    it.effect("a change made elsewhere (here: the repo on the code host) shows once the answer expires", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("expiry@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, key)
        const first = yield* get(PAGE)
        const control = yield* CodeHostMemoryControl
        yield* control.put({ ...PUBLIC_REPO, files: { ...PUBLIC_REPO.files, "README.md": "# Widget, edited on the code host\n" } })
        // Within the answer's lifetime (3 s; these requests take milliseconds) the remembered answer stands.
        expect(shape(yield* get(PAGE))).toEqual(shape(first))
        const fresh = yield* get(PAGE).pipe(
          Effect.filterOrFail((reply) => reply.text.includes("edited on the code host"), () => "still the old answer"),
          Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurUpTo("10 seconds"))),
          // Real time: the answer's lifetime is counted by the server's clock, not the test's.
          Effect.withClock(Clock.make())
        )
        expect(shape(fresh)).toEqual(yield* appAnswer(PAGE))
      }))
  })
})

describe("makeFrontDoor", () => {
  const json = (status: number, body: unknown) => HttpServerResponse.unsafeJson(body, { status })
  const door = (options: Partial<Parameters<typeof makeFrontDoor>[0]> = {}) =>
    makeFrontDoor({ ttlMs: 1000, maxEntries: 100, maxBytes: 1 << 20, ...options })

  it("serves only GET of the two routes, without query, body or payment header", () => {
    const d = door()
    expect(d.keyOf("GET", "/r/a/b", {})).toBe("page /r/a/b")
    expect(d.keyOf("GET", "/r/a/b", { accept: "text/html" })).toBeNull()
    expect(d.keyOf("GET", "/checkout/chk_1", {})).toBe("checkout /checkout/chk_1")
    expect(d.keyOf("GET", "/checkout/chk_1/test", {})).toBe("checkout /checkout/chk_1/test")
    for (const [method, url, headers] of [
      ["HEAD", "/r/a/b", {}],
      ["POST", "/checkout/chk_1", {}],
      ["GET", "/r/a/b?x=1", {}],
      ["GET", "/r/a", {}],
      ["GET", "/r/a/b/c", {}],
      ["GET", "/checkout//test", {}],
      ["GET", "/checkout/chk_1/other", {}],
      ["GET", "/checkout/chk_1", { "payment-signature": "x" }],
      ["GET", "/checkout/chk_1", { "x-payment": "x" }],
      ["GET", "/r/a/b", { "content-length": "3" }],
      ["GET", "/r/a/b", { "transfer-encoding": "chunked" }]
    ] as const) expect(d.keyOf(method, url, headers), `${method} ${url} ${JSON.stringify(headers)}`).toBeNull()
    expect(door({ ttlMs: 0 }).keyOf("GET", "/r/a/b", {})).toBeNull()
  })

  it("does not remember an answer computed while a write happened", () => {
    const d = door()
    const started = d.generation()
    d.invalidate()
    d.remember("page /r/a/b", started, json(200, { price: "old" }))
    expect(d.stats().entries).toBe(0)
    d.remember("page /r/a/b", d.generation(), json(200, { price: "new" }))
    expect(d.stats().entries).toBe(1)
  })

  it("remembers only the expected statuses, and never an answer that sets a cookie", () => {
    const d = door()
    d.remember("page /r/a/b", d.generation(), json(404, {}))
    d.remember("checkout /checkout/c", d.generation(), json(200, {}))
    d.remember("checkout /checkout/c", d.generation(), json(503, {}))
    d.remember("page /r/a/c", d.generation(), HttpServerResponse.unsafeSetCookie(json(200, {}), "s", "secret"))
    expect(d.stats().entries).toBe(0)
    d.remember("checkout /checkout/c", d.generation(), json(402, {}))
    expect(d.stats().entries).toBe(1)
  })

  it("holds at most maxEntries answers and maxBytes of bodies, dropping the oldest", () => {
    const d = door({ maxEntries: 3, maxBytes: 100 })
    for (let i = 0; i < 5; i++) d.remember(`page /r/a/${i}`, d.generation(), json(200, { i }))
    expect(d.stats().entries).toBe(3)
    d.remember("page /r/a/big", d.generation(), json(200, { pad: "x".repeat(80) }))
    expect(d.stats().bytes).toBeLessThanOrEqual(100)
    expect(d.stats().entries).toBe(2)
    // Larger than the whole budget: not remembered, nothing dropped for it.
    d.remember("page /r/a/huge", d.generation(), json(200, { pad: "x".repeat(200) }))
    expect(d.stats().entries).toBe(2)
  })

  it.effect("RESPONSE_CACHE_MS must be 0..60000 milliseconds", () =>
    Effect.gen(function*() {
      for (const bad of ["-1", "60001", "soon"]) {
        const built = yield* Effect.exit(Layer.build(FrontDoorLive.pipe(
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RESPONSE_CACHE_MS", bad]]))))
        )).pipe(Effect.scoped))
        expect(Exit.isFailure(built), bad).toBe(true)
      }
    }))
})

import { gunzipSync } from "node:zlib"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { BASE_URL, BASE_WALLET } from "../support/app.js"
import { expectTestGoods, REAL_TIME, WIDGET_FILENAME } from "../support/purchase.js"
import {
  type Answer,
  type EventKind,
  expectProblemResult,
  httpEvent,
  invoke,
  invokeWith,
  LambdaTest,
  paymentHeadersFor,
  pathOf,
  sellThroughLambda,
  signInThroughLambda,
  TestLambda
} from "./support.js"

const WIDGET = { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET }
const GADGET = { ...WIDGET, host_url: "https://github.com/octo-org/gadget" }
const KINDS: ReadonlyArray<EventKind> = ["http-api", "function-url"]

/** Bytes of the payload Lambda would return for this answer (the test's parsed `json` left out). */
const payloadOf = ({ json: _json, ...result }: Answer) => Buffer.byteLength(JSON.stringify(result))

describe("Lambda handler: JSON over HTTP API v2 and Function URL events", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("a POST with a JSON text body lists a repo; GET /r/<owner>/<repo> answers 200 JSON as UTF-8 text", () =>
      Effect.gen(function*() {
        const created = yield* invoke(httpEvent("POST", "/repos", { json: WIDGET }))
        expect(created.statusCode, created.body).toBe(201)
        expect(created.isBase64Encoded).toBe(false)
        expect(created.json).toMatchObject({ repo: "Octo-Org/Widget", selling: true })

        for (const kind of KINDS) {
          const page = yield* invoke(httpEvent("GET", "/r/Octo-Org/Widget", { kind }))
          expect(page.statusCode, page.body).toBe(200)
          expect(page.headers["content-type"]).toMatch(/^application\/json/)
          expect(page.isBase64Encoded).toBe(false)
          expect(page.headers["set-cookie"]).toBeUndefined()
          expect(JSON.parse(page.body)).toMatchObject({ repo: "Octo-Org/Widget", description: "A widget library" })
        }
      }))

    it.effect("a base64-encoded JSON body (isBase64Encoded) is decoded before the app reads it", () =>
      Effect.gen(function*() {
        const created = yield* invoke(httpEvent("POST", "/repos", { kind: "function-url", json: GADGET, base64: true }))
        expect(created.statusCode, created.body).toBe(201)
        expect(created.json).toMatchObject({ repo: "Octo-Org/Gadget" })
        // Not decoded, the same bytes are not JSON: the guard's 400 proves the flag is what made the difference.
        const undecoded = httpEvent("POST", "/repos", { json: GADGET, base64: true })
        const refused = yield* invoke({ ...undecoded, isBase64Encoded: false })
        expectProblemResult(refused, 400, "malformed_json")
      }))

    it.effect("a query string reaches the app (rawQueryString)", () =>
      Effect.gen(function*() {
        const session = yield* signInThroughLambda("query@example.com")
        const first = yield* invoke(httpEvent("GET", "/my/sales", { token: session, query: "limit=1&livemode=false" }))
        expect(first.statusCode, first.body).toBe(200)
        const refused = yield* invoke(httpEvent("GET", "/my/sales", { token: session, query: "limit=1000" }))
        expect(expectProblemResult(refused, 400, "invalid_request").detail).toMatch(/^limit/)
      }))

    it.effect("malformed JSON is a 400 problem+json from the guard, as text", () =>
      Effect.gen(function*() {
        for (const kind of KINDS) {
          for (const base64 of [false, true]) {
            const answer = yield* invoke(httpEvent("POST", "/repos", { kind, raw: "{\"host_url\": ", base64 }))
            const problem = expectProblemResult(answer, 400, "malformed_json")
            expect(problem.detail).toBe("The request body is not valid JSON.")
          }
        }
      }))

    it.effect("an unknown path is the guard's 404 problem, not a Lambda error", () =>
      Effect.gen(function*() {
        expectProblemResult(yield* invoke(httpEvent("GET", "/nope")), 404, "not_found")
      }))
  })
})

describe("Lambda handler: the 402 challenge and the paid archive (test twin, official x402 client)", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("402 keeps PAYMENT-REQUIRED; the paid archive is base64 and decodes to the gzip of the test goods", () =>
      Effect.gen(function*() {
        const { testCheckout } = yield* sellThroughLambda("twin@example.com")
        const challenge = yield* invoke(httpEvent("GET", testCheckout, { kind: "function-url" }))
        expect(challenge.statusCode, challenge.body).toBe(402)
        expect(challenge.isBase64Encoded).toBe(false)
        const required = JSON.parse(Buffer.from(challenge.headers["payment-required"]!, "base64").toString("utf8"))
        expect(required).toMatchObject({
          x402Version: 2,
          accepts: [expect.objectContaining({ scheme: "exact", network: "eip155:84532", amount: "500000", payTo: BASE_WALLET })]
        })
        expect(challenge.json).toMatchObject({ x402Version: 1 })

        const paid = yield* invoke(httpEvent("GET", testCheckout, { headers: yield* paymentHeadersFor(challenge) }))
        expect(paid.statusCode, paid.isBase64Encoded ? "" : paid.body).toBe(200)
        expect(paid.headers["content-type"]).toBe("application/gzip")
        expect(paid.headers["content-disposition"]).toBe(`attachment; filename="${WIDGET_FILENAME}"`)
        expect(paid.isBase64Encoded).toBe(true)
        const bytes = Buffer.from(paid.body, "base64")
        expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b])
        expect(gunzipSync(bytes).length).toBeGreaterThan(0)
        expectTestGoods(bytes)
        expect(paid.headers["link"]).toMatch(/^<http:\/\/repomarket\.test\/downloads\/[^>]+>; rel="receipt"$/)
        const receipt = JSON.parse(Buffer.from(paid.headers["payment-response"]!, "base64").toString("utf8"))
        expect(receipt).toMatchObject({ success: true, network: "eip155:84532" })
      }))
  })
})

describe("Lambda handler: a response over the Lambda payload limit", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("a paid archive too large to return is a 502 response_too_large naming the receipt link, settlement kept", () =>
      Effect.gen(function*() {
        const lambda = yield* TestLambda
        const { testCheckout } = yield* sellThroughLambda("big@example.com")

        // A first purchase through the normal handler: how large the paid answer and a re-download are.
        const first = yield* invoke(httpEvent("GET", testCheckout))
        const fits = yield* invoke(httpEvent("GET", testCheckout, { headers: yield* paymentHeadersFor(first) }))
        expect(fits.statusCode).toBe(200)
        const redownload = yield* invoke(httpEvent("GET", pathOf(/^<([^>]+)>/.exec(fits.headers["link"]!)![1]!)))
        expect(redownload.statusCode).toBe(200)
        const limit = Math.min(payloadOf(fits), payloadOf(redownload)) - 100

        // A second purchase through a handler whose limit that archive exceeds.
        const tight = yield* lambda.another(limit)
        const challenge = yield* invoke(httpEvent("GET", testCheckout))
        const answer = yield* invokeWith(tight, httpEvent("GET", testCheckout, { headers: yield* paymentHeadersFor(challenge) }))
        const problem = expectProblemResult(answer, 502, "response_too_large")
        const link = answer.headers["link"]!
        const receipt = /^<([^>]+)>; rel="receipt"$/.exec(link)![1]!
        expect(problem).toMatchObject({ receipt, limit_bytes: limit })
        expect(problem.detail).toContain("receipt link downloads the same archive again without paying")
        expect(JSON.parse(Buffer.from(answer.headers["payment-response"]!, "base64").toString("utf8"))).toMatchObject({ success: true })
        expect(answer.headers["cache-control"]).toBe("no-store")

        // The payment is kept: the receipt link downloads the goods where the archive fits...
        const again = yield* invoke(httpEvent("GET", pathOf(receipt)))
        expect(again.statusCode).toBe(200)
        expect(again.isBase64Encoded).toBe(true)
        expectTestGoods(Buffer.from(again.body, "base64"))
        // ...and through the same limit it is refused the same way, pointing at itself (documented caveat).
        const still = yield* invokeWith(tight, httpEvent("GET", pathOf(receipt)))
        expect(expectProblemResult(still, 502, "response_too_large").receipt).toBe(receipt)
      }))
  })
})

describe("Lambda handler: the client address is requestContext.http.sourceIp", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("the 21st sign-in link from one sourceIp is 429 (X-Forwarded-For ignored); another sourceIp is not limited", () =>
      Effect.gen(function*() {
        const ask = (n: number, sourceIp: string, headers: Record<string, string> = {}) =>
          invoke(httpEvent("POST", "/auth/magic-link", { json: { email: `user${n}@example.com` }, sourceIp, headers }))
        for (let n = 0; n < 20; n++) {
          const sent = yield* ask(n, "198.51.100.7")
          expect(sent.statusCode, sent.body).toBe(202)
        }
        const refused = yield* ask(20, "198.51.100.7", { "x-forwarded-for": "203.0.113.99" })
        expectProblemResult(refused, 429, "rate_limited")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        const other = yield* ask(21, "203.0.113.99", { "x-forwarded-for": "198.51.100.7" })
        expect(other.statusCode, other.body).toBe(202)
      }))
  })
})

describe("Lambda handler: cookies end to end (the browser sign-in)", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("the session cookie goes out in `cookies`, comes back in event.cookies, and opens the HTML dashboard", () =>
      Effect.gen(function*() {
        const email = "browser@example.com"
        const sent = yield* invoke(httpEvent("POST", "/auth/magic-link", { json: { email } }))
        expect(sent.statusCode, sent.body).toBe(202)
        const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
        const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!)

        // The emailed link's page posts its form: urlencoded, HTML accepted, same-origin (its strict-origin
        // referrer policy makes the browser name our origin; Origin: null is refused, issue 12 #9).
        const verified = yield* invoke(httpEvent("POST", "/auth/verify", {
          kind: "function-url",
          raw: new URLSearchParams({ token }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html", "sec-fetch-site": "same-origin", origin: BASE_URL }
        }))
        expect(verified.statusCode, verified.body).toBe(303)
        expect(Object.keys(verified.headers)).not.toContain("set-cookie")
        expect(verified.cookies).toHaveLength(1)
        const setCookie = verified.cookies![0]!
        expect(setCookie).toMatch(/; HttpOnly/)
        const cookie = setCookie.split(";")[0]!

        const page = { headers: { accept: "text/html" } }
        const dashboard = yield* invoke(httpEvent("GET", "/dashboard", { ...page, cookies: [cookie, "unrelated=1"] }))
        expect(dashboard.statusCode, dashboard.body.slice(0, 300)).toBe(200)
        expect(dashboard.headers["content-type"]).toMatch(/^text\/html/)
        expect(dashboard.isBase64Encoded).toBe(false)
        expect(dashboard.body).toContain(email)

        // Without the cookie (or with only other cookies) the dashboard is not shown.
        const anonymous = yield* invoke(httpEvent("GET", "/dashboard", { ...page, cookies: ["unrelated=1"] }))
        expect(anonymous.statusCode).not.toBe(200)
        expect(anonymous.body).not.toContain(email)
      }))
  })
})

import type { HttpClient, HttpServer } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Option, Runtime } from "effect"
import fc from "fast-check"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { formatUsd, parsePriceUsd } from "../../domain/Money.js"
import { normalizeEmail } from "../../domain/rules/Email.js"
import { BASE_WALLET, BASE_WALLET_2, call, PRIVATE_TOKEN, type Reply, SOLANA_WALLET, SOLANA_WALLET_2 } from "../support/app.js"
import {
  BODY_ENDPOINTS,
  type BodyEndpoint,
  expectNoServerError,
  expectProblem,
  lightSnapshot as snapshot,
  passesSchema,
  Seed,
  SeededApp
} from "../support/badInput.js"

/**
 * Generated request bodies (fast-check) against the endpoints that take one. For every body: never a 5xx; a 4xx is
 * problem+json; a body the request schema refuses is exactly 400; a 4xx changes nothing (snapshot before and after);
 * a 2xx changes exactly what the three-state contract says. Limits (anonymous listings, magic links) trip during
 * the run; their 429s are 4xx like any other and must change nothing either.
 */

type Services = Seed | SentMail | HttpServer.HttpServer | HttpClient.HttpClient
type Body = { readonly kind: "json"; readonly value: unknown } | { readonly kind: "raw"; readonly text: string }

const endpointOf = (label: string): BodyEndpoint => BODY_ENDPOINTS.find((e) => e.label === label)!

/** Runs an async fast-check property whose body is an Effect on the test's runtime. */
const check = <A>(arbitrary: fc.Arbitrary<A>, numRuns: number, property: (a: A) => Effect.Effect<void, never, Services>) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<Services>()
    yield* Effect.promise(() =>
      fc.assert(fc.asyncProperty(arbitrary, (a) => Runtime.runPromise(runtime)(property(a))), { numRuns, endOnFailure: true })
    )
  })

/** Strings as they arrive after a UTF-8 round trip (a lone surrogate becomes U+FFFD on the wire). */
const wire = (s: string) => Buffer.from(s, "utf8").toString("utf8")

const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", " ", "\u0000", "\n", "null", "undefined", "0", "😀", "a\ud800b", "<script>", "../..", "%00", "a".repeat(200))
)
const nonString = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== "string"))

/**
 * A body for an endpoint: mostly objects over its own field names with a mix of good, bad and ill-typed values,
 * sometimes with an unknown field, sometimes any JSON value, sometimes raw text.
 */
const bodyFor = (endpoint: BodyEndpoint, good: Readonly<Record<string, ReadonlyArray<string>>>): fc.Arbitrary<Body> => {
  const value = (field: string) =>
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...(good[field] ?? [""])) },
      { weight: 2, arbitrary: anyString },
      { weight: 1, arbitrary: fc.string({ minLength: endpoint.fields[field]! + 1, maxLength: endpoint.fields[field]! + 3 }) },
      { weight: 1, arbitrary: nonString }
    )
  const record = fc.record(
    Object.fromEntries(Object.keys(endpoint.fields).map((f) => [f, value(f)])) as Record<string, fc.Arbitrary<unknown>>,
    { requiredKeys: [] }
  )
  const withUnknown = fc.tuple(record, fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 }))
    .map(([r, extra]) => ({ ...extra, ...r }))
  return fc.oneof(
    { weight: 12, arbitrary: record.map((v): Body => ({ kind: "json", value: v })) },
    { weight: 2, arbitrary: withUnknown.map((v): Body => ({ kind: "json", value: v })) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v): Body => ({ kind: "json", value: v })) },
    { weight: 1, arbitrary: fc.oneof(fc.string(), fc.json()).map((text): Body => ({ kind: "raw", text })) }
  )
}

/** Sent over the client's kept-alive connections (the raw-socket helper opens one per request: too slow here). */
const send = (endpoint: BodyEndpoint, body: Body, token: string | null) =>
  Effect.gen(function*() {
    const s = yield* Seed
    const text = body.kind === "raw" ? body.text : JSON.stringify(body.value)
    return yield* call(endpoint.method, endpoint.path(s), {
      ...(token === null ? {} : { token }),
      headers: { "content-type": "application/json", accept: "application/json" },
      ...(text === "" ? {} : { raw: text })
    })
  })

/**
 * What the server will see: the parsed JSON value, or none when the text is not JSON. JSON.stringify escapes a lone
 * surrogate, so it arrives intact; raw text is UTF-8 encoded on the way, which turns one into U+FFFD.
 */
const parsed = (body: Body): Option.Option<unknown> => {
  if (body.kind === "json") return Option.some(JSON.parse(JSON.stringify(body.value)))
  try {
    return Option.some(JSON.parse(wire(body.text)))
  } catch {
    return Option.none()
  }
}

/** The checks every reply must pass, whatever the endpoint; returns the parsed body when the schema accepts it. */
const commonOracle = (endpoint: BodyEndpoint, body: Body, reply: Reply, label: string) => {
  expectNoServerError(reply, label)
  if (body.kind === "raw" && body.text === "") {
    expectProblem(reply, 400, "invalid_request")
    return null
  }
  const value = parsed(body)
  if (Option.isNone(value)) {
    expectProblem(reply, 400, "malformed_json")
    return null
  }
  if (!passesSchema(endpoint, value.value)) {
    expectProblem(reply, 400, "invalid_request")
    return null
  }
  if (reply.status === 400) {
    // A refusal after the schema names only fields that were sent.
    const problem = expectProblem(reply, 400, "invalid_request")
    for (const e of problem.errors ?? []) expect(Object.keys(value.value as object), label).toContain(e.field)
  }
  return value.value as Record<string, string>
}

const labelOf = (body: Body, reply: Reply) =>
  `${body.kind === "raw" ? `raw ${JSON.stringify(body.text)}` : JSON.stringify(body.value)} -> ${reply.status} ${reply.text.slice(0, 300)}`

/** Three-state: absent keeps `before`, "" clears to `cleared`, a value sets `set(value)`. */
const threeState = <A>(body: Record<string, string>, field: string, before: A, cleared: A, set: (v: string) => A): A =>
  !(field in body) ? before : body[field] === "" ? cleared : set(body[field]!)

const sameAddress = (a: string | null, b: string | null) => (a === null || b === null ? a === b : a.toLowerCase() === b.toLowerCase())

/**
 * The state checks read the public pages hundreds of times within one (test-clock) minute from one address:
 * the per-client page limit (PUBLIC_PAGES_PER_MINUTE, tested in public-pages-limit.test.ts) is off here.
 */
const UNLIMITED_PAGES = { config: { PUBLIC_PAGES_PER_MINUTE: "0" } }

describe("generated bodies", () => {
  layer(SeededApp({ email: "fuzz-create@example.com", keys: 6, app: UNLIMITED_PAGES }))((it) => {
    it.effect("POST /repos (anonymous): never 5xx; refused bodies change nothing; listings made are anonymous", () =>
      Effect.gen(function*() {
        const endpoint = endpointOf("POST /repos")
        const arbitrary = bodyFor(endpoint, {
          host_url: [
            "https://github.com/octo-org/gadget",
            "https://github.com/octo-org/free-thing",
            "https://github.com/Octo-Org/Widget",
            "https://github.com/octo-org/secret-sauce",
            "https://github.com/nobody/nothing",
            "https://gitlab.com/octo-org/gadget"
          ],
          wallet_base: [BASE_WALLET, BASE_WALLET.toLowerCase(), "", "0x0"],
          wallet_solana: [SOLANA_WALLET, "", "0OIl"],
          price_usd: ["1.00", "12.34", "0.00", "1.5", ""],
          host_pat: [PRIVATE_TOKEN, "wrong", ""]
        })
        let before = yield* snapshot
        yield* check(arbitrary, 150, (body) =>
          Effect.gen(function*() {
            const reply = yield* send(endpoint, body, null)
            const label = labelOf(body, reply)
            const value = commonOracle(endpoint, body, reply, label)
            const after = yield* snapshot
            if (reply.status >= 400) {
              expect(after, label).toEqual(before)
            } else {
              expect(reply.status, label).toBe(201)
              expect(value, label).not.toBeNull()
              const page = yield* call("GET", reply.json.page, { headers: { accept: "application/json" } })
              expect(page.status, label).toBe(200)
              // Anonymous: no account default can fill a chain the body named no wallet for.
              const named = ["wallet_base", "wallet_solana"].filter((f) => (value![f] ?? "") !== "")
              expect(page.json.chains.length, label).toBeLessThanOrEqual(named.length)
              expect(reply.json.selling, label).toBe((value!["price_usd"] ?? "") !== "" && named.length > 0)
              // The seller's own inventory and settings are untouched by someone else's listing.
              expect(after.stores, label).toEqual(before.stores)
              expect(after.account, label).toEqual(before.account)
            }
            before = after
          }).pipe(Effect.orDie))
      }), 60_000)
  })

  layer(SeededApp({ email: "fuzz-patch-listing@example.com", keys: 6, app: UNLIMITED_PAGES }))((it) => {
    it.effect("PATCH /repos/:owner/:repo: never 5xx; refused bodies change nothing; accepted ones change only sent fields", () =>
      Effect.gen(function*() {
        const endpoint = endpointOf("PATCH /repos/:owner/:repo")
        const arbitrary = bodyFor(endpoint, {
          wallet_base: [BASE_WALLET, BASE_WALLET_2, BASE_WALLET_2.toLowerCase(), "", "0x1234"],
          wallet_solana: [SOLANA_WALLET, SOLANA_WALLET_2, "", "not-base58-0OIl"],
          price_usd: ["0.01", "12.34", "99.99", "100000.00", "100000.01", "0.00", "7", ""],
          host_pat: ["github_pat_whatever", ""]
        })
        const s = yield* Seed
        let rotation = 0
        let before = yield* snapshot
        yield* check(arbitrary, 150, (body) =>
          Effect.gen(function*() {
            const reply = yield* send(endpoint, body, s.keys[rotation++ % s.keys.length]!)
            const label = labelOf(body, reply)
            const value = commonOracle(endpoint, body, reply, label)
            const after = yield* snapshot
            if (reply.status >= 400) {
              expect(after, label).toEqual(before)
            } else {
              expect(reply.status, label).toBe(200)
              const was = before.stores.stores[0]
              const now = after.stores.stores[0]
              expect(reply.json, label).toEqual(now)
              const defaults = before.account
              expect(now.price_usd, label).toBe(threeState(value!, "price_usd", was.price_usd, null, (v) => formatUsd(Either.getOrThrow(parsePriceUsd(v)))))
              expect(sameAddress(now.wallet_base, threeState(value!, "wallet_base", was.wallet_base, defaults.wallet_base, (v) => v)), label).toBe(true)
              expect(sameAddress(now.wallet_solana, threeState(value!, "wallet_solana", was.wallet_solana, defaults.wallet_solana, (v) => v)), label).toBe(true)
              // A public repo keeps no token, whatever was sent.
              expect(now.has_host_pat, label).toBe(false)
              if (now.price_usd !== was.price_usd) expect(now.checkout_url, label).not.toBe(was.checkout_url)
              if (now.checkout_url !== was.checkout_url) {
                const old = yield* call("GET", `${new URL(was.checkout_url).pathname}/test`)
                expectProblem(old, 410)
              }
              expect(after.account, label).toEqual(before.account)
            }
            before = after
          }).pipe(Effect.orDie))
      }), 60_000)
  })

  layer(SeededApp({ email: "fuzz-account@example.com", keys: 6, app: UNLIMITED_PAGES }))((it) => {
    it.effect("PATCH /my/account: never 5xx; refused bodies change nothing; accepted ones follow the three-state contract", () =>
      Effect.gen(function*() {
        const endpoint = endpointOf("PATCH /my/account")
        const arbitrary = bodyFor(endpoint, {
          storefront_tagline: ["Fresh tagline", "😀".repeat(140), "😀".repeat(141), "two\nlines", "tab\t", "<b>bold</b>", ""],
          // IP literals only: a host name would be looked up in DNS.
          webhook_url: ["https://93.184.216.34/hooks/sale", "https://127.0.0.1/hook", "https://[::1]/hook", "https://10.1.2.3/x", "http://93.184.216.34/insecure", "https://user:pw@93.184.216.34/x", "ftp://93.184.216.34/x", ""],
          wallet_base: [BASE_WALLET, BASE_WALLET_2.toLowerCase(), "0xZZ", ""],
          wallet_solana: [SOLANA_WALLET, SOLANA_WALLET_2, "short", ""]
        })
        const s = yield* Seed
        let rotation = 0
        let before = yield* snapshot
        yield* check(arbitrary, 150, (body) =>
          Effect.gen(function*() {
            const reply = yield* send(endpoint, body, s.keys[rotation++ % s.keys.length]!)
            const label = labelOf(body, reply)
            const value = commonOracle(endpoint, body, reply, label)
            const after = yield* snapshot
            if (reply.status >= 400) {
              expect(after, label).toEqual(before)
            } else {
              expect(reply.status, label).toBe(200)
              const was = before.account
              const now = after.account
              const { webhook_secret, listings_skipped, ...shown } = reply.json
              expect(shown, label).toEqual(now)
              expect(now.storefront_tagline, label).toBe(threeState(value!, "storefront_tagline", was.storefront_tagline, null, (v) => v))
              expect(now.webhook_url, label).toBe(threeState(value!, "webhook_url", was.webhook_url, null, (v) => new URL(v).toString()))
              expect(sameAddress(now.wallet_base, threeState(value!, "wallet_base", was.wallet_base, null, (v) => v)), label).toBe(true)
              expect(now.wallet_solana, label).toBe(threeState(value!, "wallet_solana", was.wallet_solana, null, (v) => v))
              // A secret is returned exactly when this request set a webhook.
              expect(typeof webhook_secret === "string" && webhook_secret.startsWith("whsec_"), label)
                .toBe((value!["webhook_url"] ?? "") !== "")
              expect(listings_skipped === undefined || Array.isArray(listings_skipped), label).toBe(true)
              // A carried payout address never moves because a default changed.
              expect(after.stores.stores[0].wallet_base, label).toBe(before.stores.stores[0].wallet_base)
            }
            before = after
          }).pipe(Effect.orDie))
      }), 60_000)
  })

  layer(SeededApp({ email: "fuzz-auth@example.com", keys: 2, app: UNLIMITED_PAGES }))((it) => {
    it.effect("POST /auth/magic-link: never 5xx; a 202 mails that address until its 5 links of the window are out, then nothing", () =>
      Effect.gen(function*() {
        const endpoint = endpointOf("POST /auth/magic-link")
        const arbitrary = bodyFor(endpoint, {
          email: ["buyer@example.com", "Buyer@Example.COM", " spaced@example.com ", "no-at-sign", "a@b", "a@@b.co", "x\u0000y@example.com", "😀@example.com"]
        })
        const mails = Effect.flatMap(SentMail, (m) => m.all)
        // The clock stands still here, so every request falls in one 15-minute window.
        const mailedTo = new Map<string, number>()
        yield* check(arbitrary, 300, (body) =>
          Effect.gen(function*() {
            const sentBefore = (yield* mails).length
            const reply = yield* send(endpoint, body, null)
            const label = labelOf(body, reply)
            const value = commonOracle(endpoint, body, reply, label)
            const sent = yield* mails
            if (reply.status === 202) {
              expect(reply.json, label).toEqual({ sent: true, delivery: "email" })
              const to = Either.getOrThrow(normalizeEmail(value!["email"]!))
              const before = mailedTo.get(to) ?? 0
              // Past an address's 5 links the answer stays 202 (no lock-out, no enumeration) but nothing is mailed.
              expect(sent.length, label).toBe(sentBefore + (before < 5 ? 1 : 0))
              if (before < 5) {
                expect(sent.at(-1)!.to, label).toBe(to)
                mailedTo.set(to, before + 1)
              }
            } else {
              expect(sent.length, label).toBe(sentBefore)
              if (value !== null && Either.isLeft(normalizeEmail(value["email"]!))) expectProblem(reply, 400, "invalid_request")
              else if (value !== null) expectProblem(reply, 429, "rate_limited")
            }
          }).pipe(Effect.orDie))
      }), 60_000)

    it.effect("POST /auth/verify: never 5xx, never a session for a guessed token, and the real link still works after", () =>
      Effect.gen(function*() {
        const endpoint = endpointOf("POST /auth/verify")
        yield* Effect.flatMap(SentMail, (m) => m.clear)
        const requested = yield* call("POST", "/auth/magic-link", { body: { email: "late-verifier@example.com" } })
        // The magic-link run above may have used this client's hourly allowance.
        const realToken = requested.status === 202
          ? decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last)).text)![1]!)
          : null
        const arbitrary = bodyFor(endpoint, { token: ["", "x", "not-a-real-token", "a".repeat(256), "%00", "token=abc"] })
        yield* check(arbitrary, 300, (body) =>
          Effect.gen(function*() {
            const reply = yield* send(endpoint, body, null)
            const label = labelOf(body, reply)
            const value = commonOracle(endpoint, body, reply, label)
            expect(reply.status, label).toBeGreaterThanOrEqual(400)
            if (value !== null) expectProblem(reply, value["token"] === "" ? [400] : [400, 401])
          }).pipe(Effect.orDie))
        if (realToken !== null) {
          const verified = yield* call("POST", "/auth/verify", { body: { token: realToken } })
          expect(verified.status, verified.text).toBe(200)
        }
      }), 60_000)
  })
})

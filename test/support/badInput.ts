import { HttpServer } from "@effect/platform"
import { expect, type Vitest } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as http from "node:http"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { BASE_WALLET, call, type Reply, signInWithKey, SOLANA_WALLET, TestApp, type TestAppOptions } from "./app.js"

/**
 * Helpers for the bad-input suites: the problem+json shape every error must have, raw HTTP requests (paths and
 * bodies exactly as written, which the platform client would normalise), and a seeded account whose state can be
 * snapshotted before and after a bad request.
 */

/**
 * Tests of known bugs in code this suite does not own: `it.effect.fails`, so the suite stays green while the bug
 * is there and turns red once it is fixed (then drop the marker). `BAD_INPUT_SHOW_BUGS=1` runs them as ordinary
 * tests, to see each bug's actual failure.
 */
export const knownBugOf = <R>(it: { readonly effect: Vitest.Tester<R> }): Vitest.Test<R> =>
  process.env["BAD_INPUT_SHOW_BUGS"] === "1" ? it.effect : it.effect.fails

export const PROBLEM_JSON = /^application\/problem\+json(;|$)/

/** Asserts an error response: status (one of), problem+json content type and the RFC 9457 fields plus `code`. */
export const expectProblem = (reply: Reply, status?: number | ReadonlyArray<number>, code?: string) => {
  const context = `${reply.status} ${reply.headers["content-type"]} ${reply.text.slice(0, 400)}`
  if (status !== undefined) expect(typeof status === "number" ? [status] : status, context).toContain(reply.status)
  expect(reply.status, context).toBeGreaterThanOrEqual(400)
  expect(reply.status, context).toBeLessThan(600)
  expect(reply.headers["content-type"] ?? "", context).toMatch(PROBLEM_JSON)
  const body = reply.json
  expect(body, context).toBeTypeOf("object")
  expect(body, context).not.toBeNull()
  expect(typeof body.type === "string" && body.type.length > 0, context).toBe(true)
  expect(typeof body.title === "string" && body.title.length > 0, context).toBe(true)
  expect(typeof body.detail === "string" && body.detail.length > 0, context).toBe(true)
  expect(body.status, context).toBe(reply.status)
  expect(body.code, context).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/)
  if (code !== undefined) expect(body.code, context).toBe(code)
  if (body.errors !== undefined) {
    expect(Array.isArray(body.errors), context).toBe(true)
    for (const e of body.errors) {
      expect(typeof e.field, context).toBe("string")
      expect(typeof e.message, context).toBe("string")
    }
  }
  if (reply.status === 401) expect(reply.headers["www-authenticate"] ?? "", context).toMatch(/^Bearer\b/i)
  if (reply.status === 429) expect(reply.headers["retry-after"] ?? "", context).toMatch(/^[1-9][0-9]*$/)
  return body as { code: string; errors?: ReadonlyArray<{ field: string; message: string }> }
}

/** A 400 invalid_request whose `errors` name `field` (and only fields in `allowed`, when given). */
export const expectInvalidField = (reply: Reply, field: string, allowed: ReadonlyArray<string> = [field]) => {
  const body = expectProblem(reply, 400, "invalid_request")
  const fields = (body.errors ?? []).map((e) => e.field)
  expect(fields, reply.text).toContain(field)
  for (const f of fields) expect(allowed, reply.text).toContain(f)
  return body
}

/** 2xx or 4xx, never 5xx; a 4xx is problem+json. */
export const expectNoServerError = (reply: Reply, label = "") => {
  expect(reply.status, `${label} ${reply.status} ${reply.text.slice(0, 300)}`).toBeLessThan(500)
  if (reply.status >= 400) expectProblem(reply)
}

const serverAddress = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const address = server.address
  if (address._tag !== "TcpAddress") return yield* Effect.die("the test server listens on TCP")
  return { host: address.hostname === "0.0.0.0" || address.hostname === "::" ? "127.0.0.1" : address.hostname, port: address.port }
})

export interface RawRequest {
  readonly method: string
  /** Sent verbatim: no normalisation of `..`, percent-escapes or unicode. */
  readonly path: string
  readonly headers?: Record<string, string>
  /** Sent with a Content-Length. */
  readonly body?: string | Buffer
  /** Sent with Transfer-Encoding: chunked, one write per chunk. */
  readonly chunks?: ReadonlyArray<string | Buffer>
  /** Real time to wait for the answer before giving up (a hung request fails the test instead of timing it out). */
  readonly timeoutMs?: number
}

const toReply = (status: number, headers: http.IncomingHttpHeaders, text: string): Reply => {
  let json: unknown = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  const flat: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(", ") : v
  return { status, headers: flat, text, json }
}

/** One request on its own connection through node:http, so the path and framing are exactly as given. */
export const raw = (request: RawRequest) =>
  Effect.flatMap(serverAddress, ({ host, port }) =>
    Effect.async<Reply, Error>((resume) => {
      const headers: Record<string, string> = { ...request.headers }
      if (request.body !== undefined) headers["content-length"] = String(Buffer.byteLength(request.body))
      if (request.chunks !== undefined) headers["transfer-encoding"] = "chunked"
      const req = http.request({ host, port, method: request.method, path: request.path, headers, agent: false }, (res) => {
        const parts: Array<Buffer> = []
        res.on("data", (d: Buffer) => parts.push(d))
        res.on("end", () => resume(Effect.succeed(toReply(res.statusCode ?? 0, res.headers, Buffer.concat(parts).toString("utf8")))))
        res.on("error", (e) => resume(Effect.fail(e)))
      })
      req.on("error", (e) => resume(Effect.fail(e)))
      req.setTimeout(request.timeoutMs ?? 10_000, () => {
        req.destroy()
        resume(Effect.fail(new Error(`${request.method} ${request.path}: no answer within ${request.timeoutMs ?? 10_000} ms`)))
      })
      if (request.body !== undefined) req.write(request.body)
      for (const chunk of request.chunks ?? []) req.write(chunk)
      req.end()
      return Effect.sync(() => req.destroy())
    })
  ).pipe(Effect.orDie)

/**
 * Streams a chunked body of `chunkBytes` chunks until the server answers or `capBytes` were written, and says
 * how much had been written when the answer arrived. A server that enforces a body limit while reading answers
 * long before the cap; one that buffers the whole body first answers only after the client stops.
 */
export const streamUntilAnswered = (path: string, headers: Record<string, string>, capBytes: number, chunkBytes = 64 * 1024) =>
  Effect.flatMap(serverAddress, ({ host, port }) =>
    Effect.async<{ readonly status: number; readonly writtenWhenAnswered: number; readonly written: number }>((resume) => {
      let written = 0
      let answeredAt = -1
      let finished = false
      const done = (status: number) => {
        if (finished) return
        finished = true
        resume(Effect.succeed({ status, writtenWhenAnswered: answeredAt < 0 ? written : answeredAt, written }))
      }
      const req = http.request({ host, port, method: "POST", path, headers: { ...headers, "transfer-encoding": "chunked" }, agent: false }, (res) => {
        answeredAt = written
        res.resume()
        res.on("end", () => done(res.statusCode ?? 0))
        res.on("error", () => done(res.statusCode ?? 0))
      })
      // The server may close the connection after answering early; that is not a failure of the probe.
      req.on("error", () => done(answeredAt >= 0 ? 0 : -1))
      const chunk = Buffer.alloc(chunkBytes, 0x20)
      const pump = () => {
        if (answeredAt >= 0 || written >= capBytes || req.destroyed) {
          if (!req.writableEnded) req.end()
          return
        }
        written += chunk.length
        if (req.write(chunk)) setImmediate(pump)
        else req.once("drain", pump)
      }
      pump()
      return Effect.sync(() => req.destroy())
    })
  )

/** A signed-in seller with keys, saved settings and one live listing: the state bad requests must not change. */
export class Seed extends Context.Tag("test/BadInputSeed")<Seed, {
  readonly email: string
  readonly session: string
  /** API keys of the seller; spread requests over them to stay under the per-credential limit. */
  readonly keys: ReadonlyArray<string>
  readonly keyIds: ReadonlyArray<string>
  /** A further key, never used for requests: the target of revocation attempts that must fail. */
  readonly spareKeyId: string
  /** The seeded listing, as its page path names it. */
  readonly owner: string
  readonly repo: string
  readonly checkoutId: string
}>() {}

export const SEED_TAGLINE = "Seeded storefront"

const seed = (email: string, keyCount: number) =>
  Effect.gen(function*() {
    const first = yield* signInWithKey(email)
    const keys = [first.key]
    const keyIds = [first.keyId]
    for (let n = 1; n < keyCount; n++) {
      const created = yield* call("POST", "/my/keys", { token: first.session })
      if (created.status !== 201) throw new Error(`seed key: ${created.status} ${created.text}`)
      keys.push(created.json.key)
      keyIds.push(created.json.id)
    }
    const spare = yield* call("POST", "/my/keys", { token: first.session })
    if (spare.status !== 201) throw new Error(`seed spare key: ${spare.status} ${spare.text}`)
    const listed = yield* call("POST", "/repos", {
      token: first.key,
      body: { host_url: "https://github.com/octo-org/widget", price_usd: "12.34", wallet_base: BASE_WALLET }
    })
    if (listed.status !== 201) throw new Error(`seed listing: ${listed.status} ${listed.text}`)
    const settings = yield* call("PATCH", "/my/account", {
      token: first.key,
      body: { storefront_tagline: SEED_TAGLINE, wallet_solana: SOLANA_WALLET }
    })
    if (settings.status !== 200) throw new Error(`seed settings: ${settings.status} ${settings.text}`)
    const stores = yield* call("GET", "/my/stores", { token: first.session })
    const checkoutUrl: string = stores.json.stores[0].checkout_url
    return {
      email,
      session: first.session,
      keys,
      keyIds,
      spareKeyId: spare.json.id as string,
      owner: "Octo-Org",
      repo: "Widget",
      checkoutId: new URL(checkoutUrl).pathname.split("/")[2]!
    }
  })

/** The test app with a seeded seller (on memory storage unless another is given). */
export const SeededApp = (options: { readonly email?: string; readonly keys?: number; readonly app?: TestAppOptions } = {}) =>
  Layer.effect(Seed, seed(options.email ?? "seeded-seller@example.com", options.keys ?? 4)).pipe(
    Layer.provideMerge(TestApp(options.app))
  )

let rotation = 0
/** The next of the seed's keys, round-robin. */
export const nextKey = Effect.map(Seed, (s) => s.keys[rotation++ % s.keys.length]!)

const getOk = (path: string, token?: string) =>
  Effect.gen(function*() {
    const reply = yield* call("GET", path, { ...(token === undefined ? {} : { token }), headers: { accept: "application/json" } })
    expect(reply.status, `${path}: ${reply.text.slice(0, 300)}`).toBe(200)
    return reply.json
  })

/**
 * Everything a bad request could have changed, as the API shows it: the seller's inventory, settings and keys,
 * the public owner and repo pages, the seeded checkout and the mail sent so far.
 */
export const snapshot = Effect.gen(function*() {
  const s = yield* Seed
  const token = yield* nextKey
  const stores = yield* getOk("/my/stores", token)
  const account = yield* getOk("/my/account", token)
  const keys = yield* getOk("/my/keys", token)
  const ownerPage = yield* getOk(`/r/${s.owner.toLowerCase()}`)
  const repoPage = yield* getOk(`/r/${s.owner}/${s.repo}`)
  const checkout = yield* call("GET", `/checkout/${s.checkoutId}/test`)
  const mails = (yield* Effect.flatMap(SentMail, (m) => m.all)).length
  return {
    stores,
    account,
    // last_used_at moves when a key is used, which is not a change of state a bad request could cause.
    keyIds: (keys.keys as ReadonlyArray<{ id: string }>).map((k) => k.id).sort(),
    ownerPage,
    repoPage,
    checkoutStatus: checkout.status,
    mails
  }
})

/** The part of the snapshot a listing or settings change shows in, for runs of many requests: three requests. */
export const lightSnapshot = Effect.gen(function*() {
  const s = yield* Seed
  const token = yield* nextKey
  return {
    stores: yield* getOk("/my/stores", token),
    account: yield* getOk("/my/account", token),
    ownerPage: yield* getOk(`/r/${s.owner.toLowerCase()}`),
    mails: (yield* Effect.flatMap(SentMail, (m) => m.all)).length
  }
})

/** Runs `effect` and checks that the snapshot is the same afterwards. */
export const unchanged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* snapshot
    const result = yield* effect
    const after = yield* snapshot
    expect(after).toEqual(before)
    return result
  })

type SeedValue = Context.Tag.Service<Seed>

/** An endpoint that takes a JSON body: its string fields with the schema's length bound, and a minimal body. */
export interface BodyEndpoint {
  readonly label: string
  readonly method: "POST" | "PATCH"
  readonly path: (s: SeedValue) => string
  /** The credential to send: none, or one of the seed's keys. */
  readonly auth: "none" | "key"
  /** Every accepted field and its maximum length in the request schema. */
  readonly fields: Readonly<Record<string, number>>
  /** Fields that must be present. */
  readonly required: ReadonlyArray<string>
  /** A body that passes the schema (used as the base that one bad field is added to). */
  readonly base: Readonly<Record<string, string>>
}

export const BODY_ENDPOINTS: ReadonlyArray<BodyEndpoint> = [
  {
    label: "POST /auth/magic-link",
    method: "POST",
    path: () => "/auth/magic-link",
    auth: "none",
    fields: { email: 320 },
    required: ["email"],
    base: { email: "someone@example.com" }
  },
  {
    label: "POST /auth/verify",
    method: "POST",
    path: () => "/auth/verify",
    auth: "none",
    fields: { token: 256 },
    required: ["token"],
    base: { token: "not-a-real-token" }
  },
  {
    label: "PATCH /my/account",
    method: "PATCH",
    path: () => "/my/account",
    auth: "key",
    fields: { storefront_tagline: 1024, webhook_url: 4096, wallet_base: 128, wallet_solana: 128 },
    required: [],
    base: {}
  },
  {
    label: "POST /repos",
    method: "POST",
    path: () => "/repos",
    auth: "key",
    fields: { host_url: 512, wallet_base: 128, wallet_solana: 128, price_usd: 32, host_pat: 1024 },
    required: ["host_url"],
    base: { host_url: "https://github.com/octo-org/widget" }
  },
  {
    label: "PATCH /repos/:owner/:repo",
    method: "PATCH",
    path: (s) => `/repos/${s.owner}/${s.repo}`,
    auth: "key",
    fields: { wallet_base: 128, wallet_solana: 128, price_usd: 32, host_pat: 1024 },
    required: [],
    base: {}
  }
]

/** Endpoints without a payload whose method may still carry a body: the body checks apply to them too. */
export const BODYLESS_ENDPOINTS: ReadonlyArray<{ readonly label: string; readonly method: "POST" | "DELETE"; readonly path: (s: SeedValue) => string; readonly auth: "session" | "key" }> = [
  { label: "POST /my/keys", method: "POST", path: () => "/my/keys", auth: "session" },
  { label: "DELETE /my/keys/:id", method: "DELETE", path: (s) => `/my/keys/${s.spareKeyId}`, auth: "key" },
  { label: "DELETE /repos/:owner/:repo", method: "DELETE", path: (s) => `/repos/${s.owner}/${s.repo}`, auth: "key" }
]

/** The Authorization header an endpoint needs, from the seed. */
export const authHeader = (auth: "none" | "key" | "session") =>
  Effect.gen(function*() {
    if (auth === "none") return {} as Record<string, string>
    const s = yield* Seed
    const token = auth === "session" ? s.session : yield* nextKey
    return { authorization: `Bearer ${token}` } as Record<string, string>
  })

/** Whether a JSON value would pass the endpoint's request schema (object, known fields, strings within bounds). */
export const passesSchema = (endpoint: BodyEndpoint, body: unknown): boolean => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false
  const record = body as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const max = Object.prototype.hasOwnProperty.call(endpoint.fields, key) ? endpoint.fields[key] : undefined
    const value = record[key]
    if (max === undefined || typeof value !== "string" || value.length > max) return false
  }
  return endpoint.required.every((f) => typeof record[f] === "string")
}

/** Every endpoint that reads a body, with or without a payload schema. */
export const ALL_BODY_TAKERS = [...BODY_ENDPOINTS, ...BODYLESS_ENDPOINTS]

/** Sends `body` verbatim to an endpoint with its credential and the given media type (null: no Content-Type). */
export const send = (
  endpoint: { readonly method: string; readonly path: (s: SeedValue) => string; readonly auth: "none" | "key" | "session" },
  body: string | Buffer,
  contentType: string | null = "application/json"
) =>
  Effect.gen(function*() {
    const s = yield* Seed
    const headers = yield* authHeader(endpoint.auth)
    if (contentType !== null) headers["content-type"] = contentType
    return yield* raw({ method: endpoint.method, path: endpoint.path(s), headers, body })
  })

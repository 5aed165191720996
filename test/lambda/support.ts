/*
 * Shared by test/lambda/*.test.ts: recorded-shape events (fixtures/), the Lambda handlers built over the
 * TEST ports (memory storage, fake code host, simulated payments, captured mail), and the small flows
 * (sign in, list, pay the test twin) driven through the handler the way API Gateway would call it.
 */
import { readFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { expect } from "@effect/vitest"
import { x402Client, x402HTTPClient } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { ConfigProvider, Context, Effect, Layer, Logger, Option, Scope } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import type { HttpEventV2, HttpResultV2, ScheduledEvent } from "../../hosts/lambda/Events.js"
import { type AppPorts, type LambdaHttpHandler, makeLambdaHandler } from "../../hosts/lambda/LambdaApp.js"
import { type DeliveryOptions, makeScheduledHandler, type ScheduledHandler } from "../../hosts/lambda/ScheduledDelivery.js"
import { BASE_URL, BASE_WALLET, type TestAppOptions, testPorts } from "../support/app.js"

const fixture = <A>(name: string): A => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"))

export const HTTP_API_EVENT = fixture<HttpEventV2>("http-api-v2.json")
export const FUNCTION_URL_EVENT = fixture<HttpEventV2>("function-url.json")
export const SCHEDULED_EVENT = fixture<ScheduledEvent>("scheduled-event.json")

export type EventKind = "http-api" | "function-url"

export interface EventOptions {
  readonly kind?: EventKind
  readonly query?: string
  readonly headers?: Record<string, string>
  readonly cookies?: ReadonlyArray<string>
  /** A JSON value, sent as text (or base64 with `base64: true`). */
  readonly json?: unknown
  /** A raw body, sent as given (or base64 with `base64: true`). */
  readonly raw?: string
  readonly base64?: boolean
  readonly sourceIp?: string
  readonly token?: string
}

/**
 * A request event in the recorded shape of `kind`, with the method, path, headers, body and source IP
 * replaced. Headers are lower-cased as API Gateway sends them; cookies travel in `cookies`, not `Cookie`.
 */
export const httpEvent = (method: string, path: string, options: EventOptions = {}): HttpEventV2 => {
  const base = options.kind === "function-url" ? FUNCTION_URL_EVENT : HTTP_API_EVENT
  const text = options.raw ?? (options.json === undefined ? undefined : JSON.stringify(options.json))
  const headers: Record<string, string> = {
    "accept": "application/json",
    "host": base.requestContext.domainName!,
    "user-agent": "lambda-test",
    "x-forwarded-for": options.sourceIp ?? base.requestContext.http.sourceIp,
    "x-forwarded-proto": "https",
    ...(text === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }),
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` })
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value
  const { cookies: _cookies, ...rest } = structuredClone(base)
  return {
    ...rest,
    ...(options.cookies === undefined ? {} : { cookies: options.cookies }),
    rawPath: path,
    rawQueryString: options.query ?? "",
    queryStringParameters: null,
    headers,
    requestContext: {
      ...base.requestContext,
      http: { ...base.requestContext.http, method, path, sourceIp: options.sourceIp ?? base.requestContext.http.sourceIp }
    },
    body: text === undefined ? null : options.base64 ? Buffer.from(text, "utf8").toString("base64") : text,
    isBase64Encoded: text !== undefined && options.base64 === true
  }
}

/** The Lambda handlers of one test, over one set of test ports. */
export class TestLambda extends Context.Tag("test/TestLambda")<TestLambda, {
  readonly http: LambdaHttpHandler
  readonly scheduled: ScheduledHandler
  /** Another HTTP handler over the same ports, e.g. with a lower response limit. */
  readonly another: (responseLimitBytes: number) => Effect.Effect<LambdaHttpHandler>
}>() {}

export interface LambdaTestOptions extends TestAppOptions {
  /** `WEBHOOK_ALLOW_PRIVATE_NETWORKS=true` for a loopback receiver. */
  readonly allowPrivateWebhooks?: boolean
  readonly delivery?: DeliveryOptions
}

/**
 * The test ports (test/support/app.ts) and, over exactly those instances, the Lambda HTTP and scheduled
 * handlers as `makeLambdaHandler` / `makeScheduledHandler` build them. Use as `layer(LambdaTest(), REAL_TIME)`:
 * the handlers run on the live clock, like the x402 client that signs payments.
 */
export const LambdaTest = (options: LambdaTestOptions = {}) => {
  const webhooks = options.allowPrivateWebhooks === true
    ? WebhookSenderHttp.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true"]])))))
    : Layer.empty
  const ports = Layer.merge(testPorts(options), webhooks)
  const handlers = Layer.scoped(TestLambda, Effect.gen(function*() {
    // The handlers' own access log would fill the test output; the HTTP tests drop it the same way.
    const shared = Layer.merge(Layer.succeedContext(yield* Effect.context<AppPorts>()), Logger.remove(Logger.defaultLogger))
    const scope = yield* Effect.scope
    const track = <A extends { readonly dispose: () => Promise<void> }>(handler: A) =>
      Effect.as(Scope.addFinalizer(scope, Effect.promise(() => handler.dispose())), handler)
    return {
      http: yield* track(makeLambdaHandler(shared)),
      scheduled: yield* track(makeScheduledHandler(shared, options.delivery ?? {})),
      another: (responseLimitBytes) => track(makeLambdaHandler(shared, { responseLimitBytes }))
    }
  }))
  return handlers.pipe(Layer.provideMerge(ports))
}

export interface Answer extends HttpResultV2 {
  /** The body parsed as JSON, when it is JSON text. */
  readonly json: any
}

const withJson = (result: HttpResultV2): Answer => {
  let json: unknown = undefined
  if (!result.isBase64Encoded && result.body !== "") {
    try {
      json = JSON.parse(result.body)
    } catch {
      json = undefined
    }
  }
  return { ...result, json }
}

/** Feeds one event to a handler (the test's own by default). */
export const invokeWith = (handler: LambdaHttpHandler, event: HttpEventV2) =>
  Effect.map(Effect.promise(() => handler(event)), withJson)

export const invoke = (event: HttpEventV2) => Effect.flatMap(TestLambda, (l) => invokeWith(l.http, event))

/** Asserts a problem+json answer; returns its body. */
export const expectProblemResult = (answer: Answer, status: number, code: string) => {
  expect({ status: answer.statusCode, code: answer.json?.code }, answer.body.slice(0, 500)).toEqual({ status, code })
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/)
  expect(answer.isBase64Encoded).toBe(false)
  return answer.json as { code: string; detail: string; [k: string]: unknown }
}

/** The path of an absolute URL the app hands out on BASE_URL. */
export const pathOf = (url: string) => {
  expect(url.startsWith(`${BASE_URL}/`), url).toBe(true)
  return url.slice(BASE_URL.length)
}

/** Signs in through the handler (magic link from the captured mail); returns the session token. */
export const signInThroughLambda = (email: string, sourceIp?: string) =>
  Effect.gen(function*() {
    const sent = yield* invoke(httpEvent("POST", "/auth/magic-link", { json: { email }, ...(sourceIp ? { sourceIp } : {}) }))
    expect(sent.statusCode, sent.body).toBe(202)
    const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
    const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!)
    const verified = yield* invoke(httpEvent("POST", "/auth/verify", { json: { token } }))
    expect(verified.statusCode, verified.body).toBe(200)
    return verified.json.access_token as string
  })

/** Signs up, lists the widget repo at `price_usd` (Base wallet) and returns the test checkout's path. */
export const sellThroughLambda = (email: string, price = "0.50") =>
  Effect.gen(function*() {
    const session = yield* signInThroughLambda(email)
    const created = yield* invoke(httpEvent("POST", "/repos", {
      token: session,
      json: { host_url: "https://github.com/octo-org/widget", price_usd: price, wallet_base: BASE_WALLET }
    }))
    expect(created.statusCode, created.body).toBe(201)
    return { session, testCheckout: pathOf(created.json.test_checkout_url as string) }
  })

/** The official x402 v2 client (@x402/core + @x402/evm exact scheme) for a fresh buyer. */
export const officialClient = () => {
  const buyer = privateKeyToAccount(generatePrivateKey())
  return { buyer, http: new x402HTTPClient(new x402Client().register("eip155:*", new ExactEvmScheme(buyer))) }
}

/** From a 402 answered through the handler, the headers of the paid retry, as the official client signs them. */
export const paymentHeadersFor = (challenge: Answer) =>
  Effect.promise(async () => {
    const { http } = officialClient()
    const required = http.getPaymentRequiredResponse((name) => challenge.headers[name.toLowerCase()], challenge.json)
    const payload = await http.createPaymentPayload(required)
    const headers = http.encodePaymentSignatureHeader(payload)
    return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
  })

/** A loopback webhook receiver; `statuses` are answered in turn (then 200), every request is kept. */
export const webhookReceiver = (statuses: ReadonlyArray<number> = []) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; received: Array<{ headers: IncomingHttpHeaders; rawBody: string }>; close: () => void }>((resume) => {
      const received: Array<{ headers: IncomingHttpHeaders; rawBody: string }> = []
      const answers = [...statuses]
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          received.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") })
          res.statusCode = answers.shift() ?? 200
          res.end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/hook`, received, close: () => server.close() }))
      })
    }),
    (receiver) => Effect.sync(() => receiver.close())
  )

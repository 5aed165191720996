import { Writable } from "node:stream"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Logger, Scope } from "effect"
import { HttpLive } from "../../app/AppLayer.js"
import type { HttpEventV2 } from "../../hosts/lambda/Events.js"
import { type AppPorts, makeLambdaHandler } from "../../hosts/lambda/LambdaApp.js"
import { makeLambdaStreamingHandler } from "../../hosts/lambda/LambdaStreaming.js"
import type { AwsLambdaGlobal } from "../../hosts/lambda/StreamingAdapter.js"
import { BASE_WALLET, OFFLINE_SETTINGS, ServedAsNpmStart, signInWithKey, testPorts } from "../support/app.js"
import { raw } from "../support/badInput.js"
import { REAL_TIME } from "../support/purchase.js"
import { httpEvent } from "./support.js"

/*
 * The same bad requests through the three hosts of one application — the Node server (`npm start`), the
 * buffered Lambda handler and the streaming one — over one set of ports, so one API key works on all three:
 * every host must give the same answer (status and problem code), and never a 5xx. Issue 33 finding 4: a
 * JSON body that is empty (no body, `""`, or base64 that decodes to nothing) was 400 on the Node host and
 * 500 `internal_error` with an ERROR log on both Lambda handlers.
 */

/** An in-process `awslambda` that frames a streamed response as AWS documents it (JSON prelude, 8 NUL bytes, body). */
const framedAwsLambda = (): AwsLambdaGlobal => ({
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from: (stream, metadata) => {
      stream.write(Buffer.from(JSON.stringify(metadata)))
      stream.write(Buffer.alloc(8))
      return stream
    }
  }
})

interface Answer {
  readonly status: number
  readonly code: string | undefined
  readonly text: string
}

const codeOf = (text: string): string | undefined => {
  try {
    return (JSON.parse(text) as { code?: string }).code
  } catch {
    return undefined
  }
}

class Hosts extends Context.Tag("test/BadInputParityHosts")<Hosts, {
  readonly buffered: (event: HttpEventV2) => Promise<Answer>
  readonly streaming: (event: HttpEventV2) => Promise<Answer>
}>() {}

const HostsLive = Layer.scoped(Hosts, Effect.gen(function*() {
  const shared = Layer.merge(Layer.succeedContext(yield* Effect.context<AppPorts>()), Logger.remove(Logger.defaultLogger))
  const scope = yield* Effect.scope
  const buffered = makeLambdaHandler(shared)
  const streaming = makeLambdaStreamingHandler(shared, framedAwsLambda())
  yield* Scope.addFinalizer(scope, Effect.promise(() => Promise.all([buffered.dispose(), streaming.dispose()])))
  return {
    buffered: async (event) => {
      const result = await buffered(event)
      const text = result.isBase64Encoded ? Buffer.from(result.body, "base64").toString("utf8") : result.body
      return { status: result.statusCode, code: codeOf(text), text }
    },
    streaming: async (event) => {
      const chunks: Array<Buffer> = []
      const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk)
          callback()
        }
      })
      await streaming(event, sink)
      const all = Buffer.concat(chunks)
      const at = all.indexOf(Buffer.alloc(8))
      const prelude = JSON.parse(all.subarray(0, at).toString("utf8")) as { statusCode: number }
      const text = all.subarray(at + 8).toString("utf8")
      return { status: prelude.statusCode, code: codeOf(text), text }
    }
  }
}))

const settings = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(OFFLINE_SETTINGS))))

/** The Node host as `npm start` serves it, and both Lambda handlers, over the same ports. */
const ThreeHosts = HostsLive.pipe(
  Layer.provideMerge(HttpLive.pipe(Layer.provide(settings), Layer.provideMerge(testPorts()), Layer.provideMerge(ServedAsNpmStart()))),
  Layer.provide(Logger.remove(Logger.defaultLogger))
)

/** One bad request: its body as a client sends it to the Node host, and as API Gateway hands it to Lambda. */
interface BadRequest {
  readonly label: string
  readonly contentType: string | null
  /** What the Node host receives (null: no body at all). */
  readonly node: string | null
  /** The event's `body` and `isBase64Encoded`. */
  readonly event: { readonly body: string | null; readonly base64: boolean }
}

const text = (label: string, body: string, contentType: string | null = "application/json"): BadRequest => ({
  label,
  contentType,
  node: body,
  event: { body, base64: false }
})

const BAD_REQUESTS: ReadonlyArray<BadRequest> = [
  // The empty bodies of finding 4.
  { label: "JSON type, no body (event body null)", contentType: "application/json", node: null, event: { body: null, base64: false } },
  text("JSON type, empty text body", ""),
  { label: "JSON type, empty base64 body", contentType: "application/json", node: "", event: { body: "", base64: true } },
  { label: "JSON type, base64 that decodes to nothing", contentType: "application/json", node: "", event: { body: "====", base64: true } },
  // The rest of the guard's bad inputs, for comparison.
  text("whitespace only", "  \n "),
  text("malformed JSON", "{\"email\": "),
  text("JSON null", "null"),
  text("JSON array", "[]"),
  text("JSON string", "\"x\""),
  text("an unknown field", "{\"nope\": \"x\"}"),
  text("nested too deeply", "[".repeat(300) + "]".repeat(300)),
  text("a plain-text body", "{}", "text/plain"),
  text("over 64 KiB", JSON.stringify({ email: "a".repeat(70 * 1024) }))
]

const ENDPOINTS: ReadonlyArray<{ readonly path: string; readonly auth: boolean }> = [
  { path: "/repos", auth: true },
  { path: "/auth/magic-link", auth: false },
  { path: "/auth/verify", auth: false }
]

const eventOf = (path: string, bad: BadRequest, token: string | undefined): HttpEventV2 => {
  const base = httpEvent("POST", path, { ...(token === undefined ? {} : { token }) })
  const headers: Record<string, string | undefined> = { ...base.headers }
  if (bad.contentType !== null) headers["content-type"] = bad.contentType
  if (bad.event.body !== null) {
    headers["content-length"] = String(bad.event.base64 ? Buffer.from(bad.event.body, "base64").length : Buffer.byteLength(bad.event.body))
  }
  return { ...base, headers, body: bad.event.body, isBase64Encoded: bad.event.base64 }
}

describe("the same bad input through the Node host and both Lambda handlers", () => {
  layer(ThreeHosts, REAL_TIME)((it) => {
    it.effect("every host gives the same answer (status and problem code), a 4xx, never a 5xx; an empty JSON body is 400 invalid_request", () =>
      Effect.gen(function*() {
        const hosts = yield* Hosts
        // A seller, so that POST /repos reaches its payload instead of stopping at 401.
        const { key } = yield* signInWithKey("parity@example.com")
        const listed = yield* Effect.promise(() =>
          hosts.buffered(httpEvent("POST", "/repos", { token: key, json: { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET } }))
        )
        expect(listed.status, listed.text).toBe(201)

        const differences: Array<string> = []
        const notProblems: Array<string> = []
        for (const endpoint of ENDPOINTS) {
          const token = endpoint.auth ? key : undefined
          for (const bad of BAD_REQUESTS) {
            const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
            if (bad.contentType !== null) headers["content-type"] = bad.contentType
            const node = yield* raw({ method: "POST", path: endpoint.path, headers, ...(bad.node === null ? {} : { body: bad.node }) })
            const answers = {
              node: { status: node.status, code: codeOf(node.text) },
              buffered: yield* Effect.promise(() => hosts.buffered(eventOf(endpoint.path, bad, token))),
              streaming: yield* Effect.promise(() => hosts.streaming(eventOf(endpoint.path, bad, token)))
            }
            const shown = Object.entries(answers).map(([host, a]) => `${host} ${a.status} ${a.code}`).join(", ")
            const label = `POST ${endpoint.path}, ${bad.label}: ${shown}`
            if (answers.buffered.status !== answers.node.status || answers.buffered.code !== answers.node.code ||
              answers.streaming.status !== answers.node.status || answers.streaming.code !== answers.node.code) {
              differences.push(label)
            }
            if (Object.values(answers).some((a) => a.status < 400 || a.status >= 500 || a.code === undefined)) notProblems.push(label)
            if (bad.node === "" || bad.node === null) expect(answers.node, label).toEqual({ status: 400, code: "invalid_request" })
          }
        }
        expect({ differences, notProblems }).toEqual({ differences: [], notProblems: [] })
      }), 60_000)
  })
})

import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Runtime } from "effect"
import { problemResponse } from "../Guard.js"
import { problemBody } from "../Problem.js"
import { loadMcpSdk } from "./McpSdk.js"
import { mcpServer } from "./McpServer.js"
import { MCP_PATH } from "./McpToolList.js"
import { makeMcpTools } from "./McpTools.js"
import { batchRefusal, jsonRpcRefusal, makeAnswerBudget, MCP_ANSWER_MAX_BYTES } from "./McpLimits.js"
import { CatalogGate } from "../handlers/CatalogLimits.js"


/** The request headers the Streamable HTTP transport reads; nothing else (cookies, authorization) is passed on. */
const PASSED_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"] as const

/**
 * The transport's answer (in JSON mode one JSON document, or nothing for a notification), read up to
 * `MCP_ANSWER_MAX_BYTES` and sent with its length, never as an empty chunked stream, which some clients wait on.
 * The tool results in it were fitted to the request's budget as they were produced, so this bound is a backstop:
 * an answer past it is not held or sent (500, JSON-RPC -32603).
 */
const readUpTo = async (body: ReadableStream<Uint8Array> | null, max: number): Promise<Buffer | null> => {
  if (body === null) return Buffer.alloc(0)
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return Buffer.concat(chunks, size)
    size += value.length
    if (size > max) {
      await reader.cancel()
      return null
    }
    chunks.push(value)
  }
}

const bounded = (response: Response) =>
  Effect.promise(() => readUpTo(response.body, MCP_ANSWER_MAX_BYTES)).pipe(Effect.flatMap((bytes) => {
    const options = { status: response.status, headers: { "cache-control": "no-store" } }
    if (bytes === null) {
      return Effect.as(
        Effect.logError(`MCP answer over ${MCP_ANSWER_MAX_BYTES} bytes: not sent`),
        HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code: -32603, message: "Internal error: the answer was too large" }, id: null }, { status: 500, headers: options.headers })
      )
    }
    return Effect.succeed(bytes.length === 0
      ? HttpServerResponse.empty(options)
      : HttpServerResponse.uint8Array(bytes, { ...options, contentType: response.headers.get("content-type") ?? "application/json" }))
  }))

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless. Each request gets its own server and transport
 * (no session, no server-sent stream to hold open: answers are plain JSON), so any worker or host answers any
 * request, as for the rest of the API. The body was already checked by the guard (JSON, at most 64 KiB). The
 * tools run with this request in their context: per-client limits count the MCP client's address as they
 * count an HTTP client's. What one request may ask and get back is bounded (`McpLimits.ts`): no JSON-RPC batch
 * from a client of MCP 2025-06-18 or later, at most 4 messages from a 2025-03-26 one, 1 MiB of tool results
 * (plus one embedded archive). `GET` and `DELETE` are not routed (405 with `Allow: POST`): there is no stream to
 * open and no session to end.
 */
export const mcpHandler = Effect.gen(function*() {
  // The app's one catalog gate, required here so the MCP search never makes a gate of its own.
  const tools = yield* Effect.provideService(makeMcpTools, CatalogGate, yield* CatalogGate)
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.either(request.json)
    if (body._tag === "Left") {
      return problemResponse(problemBody(400, "malformed_json", "Malformed JSON", "The request body is not valid JSON."))
    }
    const refused = batchRefusal(body.right, request.headers["mcp-protocol-version"])
    if (refused !== null) {
      return HttpServerResponse.unsafeJson(jsonRpcRefusal(refused), { status: 400, headers: { "cache-control": "no-store" } })
    }
    // The SDK is imported on the first MCP request (McpSdk.ts); not installed, the door says so.
    const sdk = yield* Effect.either(Effect.tryPromise(loadMcpSdk))
    if (sdk._tag === "Left") {
      yield* Effect.logError(String(sdk.left.error instanceof Error ? sdk.left.error.message : sdk.left.error))
      return problemResponse(problemBody(503, "mcp_unavailable", "MCP unavailable", "This server's MCP door is not installed; the HTTP API serves the same operations."))
    }
    const runtime = yield* Effect.runtime<HttpServerRequest.HttpServerRequest>()
    // Every tool result of this request is fitted to one answer budget as it is produced (McpLimits.ts).
    const budget = makeAnswerBudget()
    const server = mcpServer(sdk.right, tools, (effect) => Runtime.runPromise(runtime)(Effect.scoped(Effect.map(effect, budget.fit))))
    const transport = new sdk.right.WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
    const headers = new Headers()
    for (const name of PASSED_HEADERS) {
      const value = request.headers[name]
      if (value !== undefined) headers.set(name, value)
    }
    const web = new Request(`http://mcp.invalid${MCP_PATH}`, { method: "POST", headers })
    return yield* Effect.acquireUseRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.flatMap(Effect.promise(() => transport.handleRequest(web, { parsedBody: body.right })), bounded),
      () => Effect.promise(() => server.close())
    )
  })
})

/** The MCP route in the app's router. */
export const McpRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(mcpHandler, (handler) => router.post(MCP_PATH, handler))
)

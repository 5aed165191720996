import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect, Runtime } from "effect"
import { problemResponse } from "../Guard.js"
import { problemBody } from "../Problem.js"
import { mcpServer } from "./McpServer.js"
import { MCP_PATH } from "./McpToolList.js"
import { makeMcpTools } from "./McpTools.js"


/** The request headers the Streamable HTTP transport reads; nothing else (cookies, authorization) is passed on. */
const PASSED_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"] as const

/**
 * The transport's answer, read whole (in JSON mode it is one JSON document, or nothing for a notification): sent
 * with its length, never as an empty chunked stream, which some clients wait on.
 */
const whole = (response: Response) =>
  Effect.map(Effect.promise(() => response.text()), (text) => {
    const options = { status: response.status, headers: { "cache-control": "no-store" } }
    return text === ""
      ? HttpServerResponse.empty(options)
      : HttpServerResponse.text(text, { ...options, contentType: response.headers.get("content-type") ?? "application/json" })
  })

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless. Each request gets its own server and transport
 * (no session, no server-sent stream to hold open: answers are plain JSON), so any worker or host answers any
 * request, as for the rest of the API. The body was already checked by the guard (JSON, at most 64 KiB). The
 * tools run with this request in their context: per-client limits count the MCP client's address as they
 * count an HTTP client's. `GET` and `DELETE` are not routed (405 with `Allow: POST`): there is no stream to
 * open and no session to end.
 */
export const mcpHandler = Effect.gen(function*() {
  const tools = yield* makeMcpTools
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.either(request.json)
    if (body._tag === "Left") {
      return problemResponse(problemBody(400, "malformed_json", "Malformed JSON", "The request body is not valid JSON."))
    }
    const runtime = yield* Effect.runtime<HttpServerRequest.HttpServerRequest>()
    const server = mcpServer(tools, (effect) => Runtime.runPromise(runtime)(Effect.scoped(effect)))
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
    const headers = new Headers()
    for (const name of PASSED_HEADERS) {
      const value = request.headers[name]
      if (value !== undefined) headers.set(name, value)
    }
    const web = new Request(`http://mcp.invalid${MCP_PATH}`, { method: "POST", headers })
    return yield* Effect.acquireUseRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.flatMap(Effect.promise(() => transport.handleRequest(web, { parsedBody: body.right })), whole),
      () => Effect.promise(() => server.close())
    )
  })
})

/** The MCP route in the app's router. */
export const McpRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(mcpHandler, (handler) => router.post(MCP_PATH, handler))
)

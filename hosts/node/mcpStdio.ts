/*
 * `npm run --silent mcp`: the marketplace's MCP server on standard input and output, for an MCP client on
 * this machine that starts servers as processes (Claude Desktop, Cursor, VS Code...). The same tools as
 * `POST /mcp` (app/mcp), over the same use cases and the same ports as `npm start` (hosts/Ports.ts: the
 * embedded database under DATA_DIR, or DATABASE_URL), in this one process and without an HTTP server. So
 * standard output carries only MCP messages: every log line goes to standard error.
 *
 * It runs no workers: webhooks wait in the outbox and pending sales are reconciled by the next `npm start`
 * on the same database. The embedded database takes one process at a time: with `npm start` running on it,
 * point the MCP client at its `/mcp` instead (or give both a DATABASE_URL).
 */
import { HttpServerRequest } from "@effect/platform"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { UseCasesLive } from "../../app/AppLayer.js"
import { loadMcpSdk } from "../../app/mcp/McpSdk.js"
import { mcpServer } from "../../app/mcp/McpServer.js"
import { makeMcpTools } from "../../app/mcp/McpTools.js"
import { DefaultPorts } from "./NodePorts.js"
import { LogLevelFromConfig } from "../Settings.js"

// Whatever writes with console.log (a package, a stray debug line) goes to standard error too.
console.log = console.error

/** Log lines on standard error, never standard output (the MCP channel). */
const LogToStderr = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * The request the tools run with: a process on this machine, so per-client limits count one client,
 * `stdio`, as they would count one address.
 */
const stdioRequest = HttpServerRequest.fromWeb(new Request("http://stdio.invalid/mcp", { method: "POST" })).modify({ remoteAddress: "stdio" })

const runtime = ManagedRuntime.make(
  UseCasesLive.pipe(Layer.provideMerge(DefaultPorts), Layer.provide(LogLevelFromConfig), Layer.provide(LogToStderr))
)

const stop = (code: number) => {
  void runtime.dispose().finally(() => process.exit(code))
}

try {
  const tools = await runtime.runPromise(makeMcpTools)
  const server = mcpServer(await loadMcpSdk(), tools, (effect) =>
    runtime.runPromise(Effect.scoped(Effect.provideService(effect, HttpServerRequest.HttpServerRequest, stdioRequest))))
  const transport = new StdioServerTransport()
  transport.onclose = () => stop(0)
  process.stdin.on("end", () => stop(0))
  process.on("SIGINT", () => stop(0))
  process.on("SIGTERM", () => stop(0))
  await server.connect(transport)
  console.error("repomarket MCP server on stdio (tools: search_listings, get_repo, buy_repo, redownload)")
} catch (error) {
  console.error(`repomarket MCP server could not start: ${error instanceof Error ? error.message : String(error)}`)
  stop(1)
}

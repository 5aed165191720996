import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Effect } from "effect"
import type { McpSdk } from "./McpSdk.js"
import type { ToolResult } from "./McpResults.js"
import type { McpTools, ToolContext } from "./McpTools.js"
import { TOOLS } from "./McpToolList.js"

/** The server's name and version as `initialize` reports them. */
export const MCP_SERVER_INFO = { name: "repomarket", title: "repomarket: code repositories for sale over x402", version: "0.1.0" } as const

/** What `initialize` tells the agent about using the tools together. */
export const MCP_INSTRUCTIONS =
  "Buy code repositories with USDC over x402. search_listings finds what is for sale, get_repo previews one (tree, README, price, commit), " +
  "buy_repo buys it: the first call answers x402 payment-required with the terms; your x402 wallet pays and you call buy_repo again with the payment in _meta[\"x402/payment\"]. " +
  "Rehearse with test_checkout_url (simulated money). Keep the receipt link of the paid answer: it downloads the archive for 7 days, and redownload uses it."

/**
 * An MCP server (the official TypeScript SDK's) answering `tools/list` with `TOOLS` and `tools/call` with
 * `tools.call`, each call run by `run` (which supplies the request and a scope). Transport-neutral: the HTTP
 * route connects it to a Streamable HTTP transport per request, the stdio host to standard input and output.
 * The low-level `Server` is used because the tools bring their own JSON Schemas and decoders. `sdk` is the
 * SDK as `loadMcpSdk` imported it.
 */
export const mcpServer = (
  sdk: McpSdk,
  tools: McpTools,
  run: (effect: Effect.Effect<ToolResult, never, ToolContext>) => Promise<ToolResult>
): Server => {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- see above: the high-level McpServer takes only zod schemas.
  const { CallToolRequestSchema, ListToolsRequestSchema } = sdk
  const server = new sdk.Server(MCP_SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: MCP_INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map((t) => ({ ...t, inputSchema: { ...t.inputSchema } })) as never }))
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    (await run(tools.call(request.params.name, request.params.arguments, request.params._meta))) as never)
  return server
}

/**
 * The official MCP TypeScript SDK, an optional peer dependency of the package: only the MCP door (`POST /mcp`
 * and `npm run mcp`) uses it, so it is imported when that door first answers, not when the app starts (a
 * Lambda's init and a library user who never serves MCP skip it). Loaded once per process.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

/** The SDK's parts the MCP door uses. */
export interface McpSdk {
  readonly Server: typeof Server
  readonly WebStandardStreamableHTTPServerTransport: typeof WebStandardStreamableHTTPServerTransport
  readonly CallToolRequestSchema: typeof CallToolRequestSchema
  readonly ListToolsRequestSchema: typeof ListToolsRequestSchema
}

/** The package the MCP door needs, as `npm install` takes it. */
export const MCP_SDK_PACKAGE = "@modelcontextprotocol/sdk"

/** Why the MCP door cannot answer when the SDK is not installed, and how to fix it. */
export const MCP_SDK_MISSING =
  `The MCP door needs ${MCP_SDK_PACKAGE}, an optional peer dependency of repomarket that is not installed: npm install ${MCP_SDK_PACKAGE}`

let loaded: Promise<McpSdk> | undefined

/**
 * The SDK, imported on first call (the same promise after). Rejects with {@link MCP_SDK_MISSING} when the
 * package is not installed; a later call tries again, so installing it needs no restart of a long-lived host.
 */
export const loadMcpSdk = (): Promise<McpSdk> =>
  loaded ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ]).then(
    ([server, transport, types]) => ({
      Server: server.Server,
      WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
      CallToolRequestSchema: types.CallToolRequestSchema,
      ListToolsRequestSchema: types.ListToolsRequestSchema
    }),
    (cause: unknown) => {
      loaded = undefined
      const code = (cause as { code?: unknown } | null)?.code
      throw code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" ? new Error(MCP_SDK_MISSING, { cause }) : cause
    }
  )

/**
 * The official MCP TypeScript SDK, an optional peer dependency of the package: only the MCP door (`POST /mcp`
 * and `npm run mcp`) uses it, so it is imported when that door first answers, not when the app starts (a
 * Lambda's init and a library user who never serves MCP skip it). Loaded once per process.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { importOptional } from "../../codec/OptionalPackages.js"

/** The SDK's parts the MCP door uses. */
export interface McpSdk {
  readonly Server: typeof Server
  readonly WebStandardStreamableHTTPServerTransport: typeof WebStandardStreamableHTTPServerTransport
  readonly CallToolRequestSchema: typeof CallToolRequestSchema
  readonly ListToolsRequestSchema: typeof ListToolsRequestSchema
}

/** The package the MCP door needs, as `npm install` takes it. */
export const MCP_SDK_PACKAGE = "@modelcontextprotocol/sdk"

let loaded: Promise<McpSdk> | undefined

/**
 * The SDK, imported on first call (the same promise after). Rejects naming the package and `npm install` when it
 * is not installed (`importOptional`; a failure inside the SDK passes through as itself); a later call tries
 * again, so installing it needs no restart of a long-lived host.
 */
export const loadMcpSdk = (): Promise<McpSdk> =>
  loaded ??= importOptional("The MCP door", [MCP_SDK_PACKAGE], () =>
    Promise.all([
      import("@modelcontextprotocol/sdk/server/index.js"),
      import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
      import("@modelcontextprotocol/sdk/types.js")
    ])).then(
      ([server, transport, types]) => ({
        Server: server.Server,
        WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
        CallToolRequestSchema: types.CallToolRequestSchema,
        ListToolsRequestSchema: types.ListToolsRequestSchema
      }),
      (cause: unknown) => {
        loaded = undefined
        throw cause
      }
    )

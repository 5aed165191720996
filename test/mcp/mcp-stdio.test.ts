import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, describe, expect, it } from "vitest"

// The documented command, `npm run --silent mcp`, started as an MCP client starts a stdio server: the official
// client speaks to it over standard input and output, on a fresh embedded database of its own.

const dataDir = mkdtempSync(join(tmpdir(), "repomarket-mcp-stdio-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("npm run --silent mcp", () => {
  it("serves the four tools over stdio, and answers a search from its own database", async () => {
    const client = new Client({ name: "repomarket-tests", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: "npm",
      args: ["run", "--silent", "mcp"],
      cwd: process.cwd(),
      // What an MCP client passes a server it starts (PATH, HOME...; not this process's test settings).
      env: { ...getDefaultEnvironment(), DATA_DIR: dataDir, BASE_RPC_URL: "off", SOLANA_RPC_URL: "off" },
      stderr: "pipe"
    })
    let log = ""
    transport.stderr?.on("data", (d: Buffer) => void (log += d.toString()))
    // If it cannot start, its standard error says why.
    await client.connect(transport).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${log}`)
    })
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["search_listings", "get_repo", "buy_repo", "redownload"])
      const found = (await client.callTool({ name: "search_listings", arguments: { q: "widget" } })) as any
      expect(found.isError).not.toBe(true)
      expect(found.structuredContent).toMatchObject({ listings: [], next_cursor: null })
      const missing = (await client.callTool({ name: "get_repo", arguments: { repo: "nobody" } })) as any
      expect(missing.structuredContent).toMatchObject({ status: 400, code: "invalid_request" })
    } finally {
      await client.close()
    }
  }, 120_000)
})

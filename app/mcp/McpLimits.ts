import { problemBody } from "../Problem.js"
import { MAX_EMBEDDED_BYTES } from "./McpToolList.js"
import { problemResult, type ToolResult } from "./McpResults.js"

/*
 * What one `POST /mcp` may cost, in work and in bytes out. The request body is bounded by the guard (64 KiB);
 * these bound what it asks for and what it gets back:
 * - JSON-RPC batches: MCP removed them in its 2025-06-18 revision ("Remove support for JSON-RPC batching",
 *   https://modelcontextprotocol.io/specification/2025-06-18/changelog). A client speaking 2025-06-18 or later
 *   never sends one, so a batch from it is refused. Only 2025-03-26 had them (its servers had to accept
 *   them); for a client of that revision (its `MCP-Protocol-Version`, or none: the transport reads a request
 *   without the header as 2025-03-26) a batch of at most `MCP_MAX_BATCH` messages is answered, a larger one
 *   refused. A refusal is HTTP 400 with JSON-RPC error -32600 (Invalid Request), before any tool runs.
 * - The answer: the tool results of one request share `MCP_ANSWER_BUDGET_BYTES` (1 MiB) of JSON. A result that
 *   does not fit in what is left is replaced by a small `response_too_large` problem; results carry their large
 *   parts as links (`get_repo`'s page, a purchase's receipt), never whole. An embedded archive (paid goods,
 *   `include_archive`, at most `MAX_EMBEDDED_BYTES`) is outside that budget, one per request: a second one in
 *   the same answer is left out (its receipt link stays).
 * Each tool call still counts against the caller's per-client limits as it runs (`McpTools`).
 */

/** The one MCP revision with JSON-RPC batches. */
export const BATCH_PROTOCOL_VERSION = "2025-03-26"

/** The most messages a batch of a 2025-03-26 client may hold. */
export const MCP_MAX_BATCH = 4

/** The JSON of the tool results of one request, in bytes. */
export const MCP_ANSWER_BUDGET_BYTES = 1024 * 1024

/** Embedded archives per request, beyond the budget. */
const EMBEDDED_ARCHIVES_PER_ANSWER = 1

/**
 * The most a whole answer may be (the budget, one embedded archive as base64, the JSON-RPC envelopes): the
 * route reads the transport's answer up to this and refuses to send more.
 */
export const MCP_ANSWER_MAX_BYTES = MCP_ANSWER_BUDGET_BYTES + Math.ceil(MAX_EMBEDDED_BYTES / 3) * 4 + 256 * 1024

/** A JSON-RPC error answer (HTTP 400, `id: null`), as the transport writes its own refusals. */
export const jsonRpcRefusal = (message: string) => ({ jsonrpc: "2.0", error: { code: -32600, message }, id: null }) as const

/**
 * Why a request body is refused before any tool runs, or null: a JSON-RPC batch from a client of a revision
 * without batches, or one of more than `MCP_MAX_BATCH` messages.
 */
export const batchRefusal = (body: unknown, protocolVersion: string | undefined): string | null => {
  if (!Array.isArray(body)) return null
  if (protocolVersion !== undefined && protocolVersion !== BATCH_PROTOCOL_VERSION) {
    return `Invalid Request: MCP ${protocolVersion} has no JSON-RPC batches (removed in revision 2025-06-18); send one message per request.`
  }
  if (body.length > MCP_MAX_BATCH) {
    return `Invalid Request: a JSON-RPC batch holds at most ${MCP_MAX_BATCH} messages here (MCP 2025-03-26; later revisions have no batches); send one message per request.`
  }
  return null
}

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8")

const tooLarge = () =>
  problemResult(problemBody(
    413,
    "response_too_large",
    "Answer too large",
    `The answers to this request would pass ${MCP_ANSWER_BUDGET_BYTES / (1024 * 1024)} MiB. Ask for one thing per request, or a smaller page (search_listings' limit).`
  ))

const isEmbeddedArchive = (c: Record<string, unknown>) =>
  c["type"] === "resource" && typeof (c["resource"] as { blob?: unknown } | undefined)?.blob === "string"

/** A result without its embedded archive: the receipt link stays, and the structured content says so. */
const withoutArchive = (result: ToolResult): ToolResult => ({
  ...result,
  content: [
    ...result.content.filter((c) => !isEmbeddedArchive(c)),
    { type: "text", text: "The archive is not embedded: this answer already holds one. Download it with the receipt link." }
  ],
  ...(result.structuredContent === undefined ? {} : { structuredContent: { ...result.structuredContent, archive_embedded: false } })
})

/**
 * The budget of one request's answer: `fit` takes each tool result as it is produced and gives back what may
 * be sent for it (the result, the result without a second embedded archive, or `response_too_large`).
 */
export const makeAnswerBudget = () => {
  let left = MCP_ANSWER_BUDGET_BYTES
  let archives = EMBEDDED_ARCHIVES_PER_ANSWER
  const fit = (result: ToolResult): ToolResult => {
    let kept = result
    const embedded = kept.content.filter(isEmbeddedArchive).length
    if (embedded > 0) {
      if (archives > 0 && embedded === 1) archives--
      else kept = withoutArchive(kept)
    }
    // The archive's base64 is outside the budget; everything else counts.
    const size = byteLength({ ...kept, content: kept.content.map((c) => isEmbeddedArchive(c) ? { type: "resource" } : c) })
    if (size > left) {
      const refused = tooLarge()
      left = Math.max(0, left - byteLength(refused))
      return refused
    }
    left -= size
    return kept
  }
  return { fit }
}

import { describe, expect, it } from "@effect/vitest"
import {
  extractDiscoveryInfo,
  sanitizeResourceServiceMetadata,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec
} from "@x402/extensions/bazaar"
import { BUY_TOOL_DISCOVERY, CHECKOUT_DISCOVERY, serviceMetadata, withOurDiscovery } from "../../codec/BazaarDiscovery.js"

// The Bazaar entries as @x402/extensions 2.27 reads them: the MCP-tool entry of buy_repo, the service metadata
// on `resource`, and which of our two entries a payment carries to the facilitator.

const CHECKOUT = { url: "https://market.example/checkout/chk_1", description: "octo/widget: the repository's default branch as a .tar.gz" }
const requirements = { scheme: "exact", network: "eip155:8453", asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", amount: "10000", payTo: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", maxTimeoutSeconds: 300, extra: {} }
const payment = (extensions?: Record<string, unknown>) => ({
  x402Version: 2,
  accepted: requirements,
  payload: { signature: "0x00" },
  ...(extensions === undefined ? {} : { extensions })
})

describe("service metadata", () => {
  it("names the service, tags the language first and the icon, each kept by the package's sanitizer", () => {
    const meta = serviceMetadata("https://market.example", "TypeScript")
    expect(meta).toEqual({
      serviceName: "repomarket",
      tags: ["typescript", "source-code", "git-repository", "marketplace", "x402"],
      iconUrl: "https://market.example/favicon.svg"
    })
    expect(sanitizeResourceServiceMetadata({ url: "https://market.example", ...meta })).toEqual(meta)
    // Without a language, five tags still fit; a loopback or IP-literal host gets no icon (facilitators drop it).
    expect(serviceMetadata("https://market.example").tags).toEqual(["source-code", "git-repository", "marketplace", "x402"])
    expect(serviceMetadata("http://127.0.0.1:3000").iconUrl).toBeUndefined()
    expect(serviceMetadata("http://localhost:3000").iconUrl).toBeUndefined()
  })
})

describe("the buy_repo MCP-tool entry", () => {
  it("is valid by @x402/extensions and names the tool, its transport and its arguments", () => {
    expect(validateDiscoveryExtension(BUY_TOOL_DISCOVERY as never)).toEqual({ valid: true })
    expect(validateDiscoveryExtensionSpec(BUY_TOOL_DISCOVERY as never)).toEqual({ valid: true })
    expect((BUY_TOOL_DISCOVERY as any).info.input).toMatchObject({
      type: "mcp",
      toolName: "buy_repo",
      transport: "streamable-http",
      inputSchema: { type: "object", required: ["checkout_url"] }
    })
  })
})

describe("what the facilitator catalogs", () => {
  it("a payment echoing the MCP-tool entry: our /mcp resource and buy_repo entry, with our metadata", () => {
    const sent = withOurDiscovery(payment({ bazaar: BUY_TOOL_DISCOVERY }), CHECKOUT) as any
    expect(sent.resource).toMatchObject({ url: "https://market.example/mcp", serviceName: "repomarket", iconUrl: "https://market.example/favicon.svg" })
    expect(sent.extensions.bazaar).toEqual(BUY_TOOL_DISCOVERY)
    expect(extractDiscoveryInfo(sent, requirements as never, true)).toMatchObject({
      resourceUrl: "https://market.example/mcp",
      toolName: "buy_repo",
      serviceName: "repomarket",
      tags: ["source-code", "git-repository", "marketplace", "x402"]
    })
  })

  it("a changed MCP entry is replaced by ours; no echo, or an HTTP one, is the checkout's entry", () => {
    const forged = { ...BUY_TOOL_DISCOVERY, info: { input: { type: "mcp", toolName: "free_stuff", inputSchema: { type: "object" } } } }
    const sent = withOurDiscovery(payment({ bazaar: forged }), CHECKOUT) as any
    expect(sent.extensions.bazaar).toEqual(BUY_TOOL_DISCOVERY)
    expect(extractDiscoveryInfo(sent, requirements as never, true)).toMatchObject({ toolName: "buy_repo" })
    for (const echo of [undefined, { bazaar: CHECKOUT_DISCOVERY }, { bazaar: "junk" }]) {
      const http = withOurDiscovery(payment(echo), CHECKOUT) as any
      expect(http.resource).toEqual({ ...CHECKOUT, mimeType: "application/gzip", ...serviceMetadata("https://market.example") })
      expect(http.extensions.bazaar).toEqual(CHECKOUT_DISCOVERY)
    }
  })
})

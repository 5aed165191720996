import type { HTTPRequestContext } from "@x402/core/http"
import { BAZAAR, bazaarResourceServerExtension, declareDiscoveryExtension, sanitizeResourceServiceMetadata } from "@x402/extensions/bazaar"
import { isRecord } from "../domain/Jws.js"

/** What every checkout sells: a gzipped tar. */
export const GOODS_MIME_TYPE = "application/gzip"

/** The extension's key in `PaymentRequired.extensions` and `PaymentPayload.extensions`: `bazaar`. */
export const BAZAAR_KEY: string = BAZAAR.key

/** What the archive holds, as the Bazaar's `info.output.example` shows it to an agent (no value is a secret). */
const ARCHIVE_EXAMPLE = {
  filename: "<owner>-<repo>-<sha7>.tar.gz",
  contents: "the repository's default branch at one commit, pinned when the payment is verified, as a tar.gz",
  receipt: "Link: <…/downloads/<token>>; rel=\"receipt\" re-downloads the same commit for 7 days"
}

const ARCHIVE_SCHEMA = {
  type: "object",
  properties: {
    filename: { type: "string", description: "Content-Disposition filename of the archive" },
    contents: { type: "string" },
    receipt: { type: "string" }
  }
}

/**
 * The GET of a checkout, as @x402/core's HTTP middlewares describe a request to the Bazaar's server hook. It
 * has no `routePattern` on purpose: given `/checkout/:id` the hook adds a `routeTemplate`, and facilitators
 * then catalog every checkout as one entry, while each checkout URL sells a different repository.
 */
const checkoutGet: HTTPRequestContext = {
  method: "GET",
  path: "/checkout",
  adapter: {
    getHeader: () => undefined,
    getMethod: () => "GET",
    getPath: () => "/checkout",
    getUrl: () => "/checkout",
    getAcceptHeader: () => "*/*",
    getUserAgent: () => ""
  }
}

/**
 * The x402 `bazaar` discovery declaration every checkout's 402 carries (docs/extensions/bazaar.mdx): a GET
 * with no input whose answer is an `application/gzip` archive. Built with @x402/extensions' own
 * `declareDiscoveryExtension`, then its server hook (`bazaarResourceServerExtension.enrichDeclaration`) sets
 * the method as the official middlewares do. The package writes `output.type: "json"` for any output, so the
 * type is set to the archive's media type afterwards (its generated schema allows any string there). The same
 * for every listing (the listing's own words travel in `resource.description`), so a 402 the front door
 * remembers is always right.
 */
const declare = (): Readonly<Record<string, unknown>> => {
  const declared = declareDiscoveryExtension({ output: { example: ARCHIVE_EXAMPLE, schema: ARCHIVE_SCHEMA } })[BAZAAR.key]
  const enriched = bazaarResourceServerExtension.enrichDeclaration!(declared, checkoutGet) as {
    readonly info: { readonly output?: Record<string, unknown> }
  }
  return { ...enriched, info: { ...enriched.info, output: { ...enriched.info.output, type: GOODS_MIME_TYPE, format: "tar.gz" } } }
}

/** The x402 Bazaar discovery declaration every checkout's 402 carries (see `declare` above). */
export const CHECKOUT_DISCOVERY: Readonly<Record<string, unknown>> = declare()

/** The marketplace's name in Bazaar entries (`resource.serviceName`: printable ASCII, at most 32 characters). */
export const SERVICE_NAME = "repomarket"

/** Tags every entry carries; a listing's language comes first when known (the Bazaar keeps five). */
const SERVICE_TAGS = ["source-code", "git-repository", "marketplace", "x402"] as const

/**
 * The Bazaar's service metadata for a resource of the server at `origin` (@x402/extensions 2.27, "Service
 * Metadata on `resource`"): `serviceName`, `tags` (the listing's language, when known, then what every
 * listing is) and `iconUrl` (the site's icon). Each field passes the package's own sanitizer, which drops
 * what a facilitator would drop: an icon on a loopback or IP-literal host (a development server) is left out.
 */
export const serviceMetadata = (origin: string, language?: string | null): { readonly serviceName?: string; readonly tags?: Array<string>; readonly iconUrl?: string } =>
  sanitizeResourceServiceMetadata({
    url: origin,
    serviceName: SERVICE_NAME,
    tags: [...(language === null || language === undefined ? [] : [language.toLowerCase().replace(/[^a-z0-9+#.-]/g, "-")]), ...SERVICE_TAGS],
    iconUrl: `${origin}/favicon.svg`
  })

/** The MCP path the paid tool is served at (app/mcp), relative to the server's origin. */
export const MCP_ENDPOINT_PATH = "/mcp"

/** The paid MCP tool's name. */
export const BUY_TOOL = "buy_repo"

const BUY_TOOL_DESCRIPTION = "Buy a code repository for USDC; the paid call returns the pinned commit and a receipt link to its .tar.gz"

/**
 * The Bazaar's MCP-tool entry for `buy_repo` (`info.input.type: "mcp"`), built with @x402/extensions'
 * `declareDiscoveryExtension`: the tool name, Streamable HTTP, its argument schema (as `tools/list` gives it) and
 * an example, and what the paid result holds. Declared on the payment-required answer of `buy_repo`.
 */
export const BUY_TOOL_DISCOVERY: Readonly<Record<string, unknown>> = { ...declareDiscoveryExtension({
  toolName: BUY_TOOL,
  description: BUY_TOOL_DESCRIPTION,
  transport: "streamable-http",
  inputSchema: {
    type: "object",
    properties: {
      checkout_url: { type: "string", description: "checkout_url or test_checkout_url of a listing (search_listings, get_repo)" },
      include_archive: { type: "boolean", description: "Embed the .tar.gz (at most 4 MiB) in the result" }
    },
    required: ["checkout_url"]
  },
  example: { checkout_url: "https://<host>/checkout/<id>" },
  output: {
    example: { repo: "<owner>/<repo>", commit: "<sha>", filename: "<owner>-<repo>-<sha7>.tar.gz", receipt: "https://<host>/downloads/<token>" },
    schema: {
      type: "object",
      properties: { repo: { type: "string" }, commit: { type: "string" }, filename: { type: "string" }, receipt: { type: "string" } }
    }
  }
})[BAZAAR.key]! }

/** The origin of an absolute URL, or null. */
const originOf = (url: string): string | null => {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

/** Whether a payment's echoed `bazaar` extension is an MCP-tool entry (the buyer paid through `buy_repo`). */
const echoesMcpTool = (extensions: Record<string, unknown>): boolean => {
  const bazaar = extensions[BAZAAR.key]
  if (!isRecord(bazaar) || !isRecord(bazaar["info"])) return false
  const input = bazaar["info"]["input"]
  return isRecord(input) && input["type"] === "mcp"
}

/**
 * A v2 payment as it goes to the facilitator. The Bazaar spec has the client echo the 402's `bazaar`
 * extension into its payment and the facilitator catalog `resource` and `extensions.bazaar` from that payload;
 * the buyer writes both, so a buyer could otherwise have our payment catalog our checkout under another URL,
 * route template or description. The facilitator therefore gets what we declared, whether the client echoed
 * it, changed it or left it out: our checkout's resource and `bazaar` declaration, or, for a payment whose
 * echo is an MCP-tool entry (made through `buy_repo`), our `/mcp` resource and `buy_repo` entry; either way
 * with our service metadata. The buyer can only pick which of our two true entries is cataloged. The rest
 * (the signed scheme payload, other extensions) is forwarded as received; neither field is covered by the
 * payment's signature.
 */
export const withOurDiscovery = (
  raw: unknown,
  resource: { readonly url: string; readonly description: string }
): Record<string, unknown> => {
  const payload = isRecord(raw) ? raw : {}
  const extensions = isRecord(payload["extensions"]) ? payload["extensions"] : {}
  const origin = originOf(resource.url)
  const service = origin === null ? {} : serviceMetadata(origin)
  const viaMcp = origin !== null && echoesMcpTool(extensions)
  return {
    ...payload,
    resource: viaMcp
      ? { url: origin + MCP_ENDPOINT_PATH, description: BUY_TOOL_DESCRIPTION, mimeType: "application/json", ...service }
      : { url: resource.url, description: resource.description, mimeType: GOODS_MIME_TYPE, ...service },
    extensions: { ...extensions, [BAZAAR.key]: viaMcp ? BUY_TOOL_DISCOVERY : CHECKOUT_DISCOVERY }
  }
}

import type { HTTPRequestContext } from "@x402/core/http"
import { BAZAAR, bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar"

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

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A v2 payment as it goes to the facilitator. The Bazaar spec has the client echo the 402's `bazaar`
 * extension into its payment and the facilitator catalog `resource` and `extensions.bazaar` from that payload;
 * the buyer writes both, so a buyer could otherwise have our payment catalog our checkout under another URL,
 * route template or description. The facilitator therefore gets what we declared: our checkout's resource
 * and our own `bazaar` declaration, whether the client echoed it, changed it or left it out. The rest (the
 * signed scheme payload, other extensions) is forwarded as received; neither field is covered by the
 * payment's signature.
 */
export const withOurDiscovery = (
  raw: unknown,
  resource: { readonly url: string; readonly description: string }
): Record<string, unknown> => {
  const payload = isRecord(raw) ? raw : {}
  const extensions = isRecord(payload["extensions"]) ? payload["extensions"] : {}
  return {
    ...payload,
    resource: { url: resource.url, description: resource.description, mimeType: GOODS_MIME_TYPE },
    extensions: { ...extensions, [BAZAAR.key]: CHECKOUT_DISCOVERY }
  }
}

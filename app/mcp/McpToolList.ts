import { Either, ParseResult, Schema } from "effect"
import { FieldProblem, InvalidInput } from "../../domain/Errors.js"
import { CATEGORIES } from "../../domain/rules/Category.js"
import { MCP_ENDPOINT_PATH } from "../../codec/BazaarDiscovery.js"
import { REDOWNLOADS_PER_RECEIPT_PER_HOUR } from "../../domain/usecases/Redownloads.js"

/**
 * The MCP tools an agent buys with, as `tools/list` describes them: names, the words an agent chooses by,
 * JSON Schemas for their arguments (written out, not generated, so every field carries its sentence), and the
 * Effect schemas the arguments are decoded with (unknown fields are refused, as `/listings` refuses unknown
 * parameters: a misspelt filter must not widen a search or a purchase).
 */

/** The path of the MCP server (Streamable HTTP), as the Bazaar's MCP-tool entry names it. */
export const MCP_PATH = MCP_ENDPOINT_PATH

/** The most of an archive a result embeds: base64 makes it a third larger, and it travels in one JSON answer. */
export const MAX_EMBEDDED_BYTES = 4 * 1024 * 1024

const EMBED_LIMIT = `${MAX_EMBEDDED_BYTES / (1024 * 1024)} MiB`

/** `_meta` key of an x402 payment in a `tools/call` request (coinbase/x402 specs/transports-v2/mcp.md). */
export const PAYMENT_META = "x402/payment"

/** `_meta` key of the settlement in a paid tool result (the same spec). */
export const PAYMENT_RESPONSE_META = "x402/payment-response"

const checkoutUrl = {
  type: "string",
  description:
    "The listing's checkout_url (real USDC) or test_checkout_url (the test twin: test networks, simulated money, a small archive with the tree's manifest instead of the code), exactly as search_listings or get_repo gave it."
} as const

/** `search_listings`' arguments: the catalog's query parameters, as `GET /listings` takes them. */
export const SearchArgs = Schema.Struct({
  q: Schema.optional(Schema.String),
  language: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  topic: Schema.optional(Schema.String),
  chain: Schema.optional(Schema.String),
  max_price_usd: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  sort: Schema.optional(Schema.String),
  cursor: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.Number)
})

/** `get_repo`'s arguments. */
export const GetRepoArgs = Schema.Struct({ repo: Schema.String })

/** `buy_repo`'s arguments. */
export const BuyArgs = Schema.Struct({
  checkout_url: Schema.String,
  include_archive: Schema.optional(Schema.Boolean)
})

/** `redownload`'s arguments: a receipt, or a checkout and a Sign-In-With-X proof of the paying wallet. */
export const RedownloadArgs = Schema.Struct({
  receipt: Schema.optional(Schema.String),
  checkout_url: Schema.optional(Schema.String),
  sign_in_with_x: Schema.optional(Schema.String),
  latest: Schema.optional(Schema.Boolean)
})

/** An MCP tool as `tools/list` lists it. */
export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: { readonly type: "object"; readonly properties: Record<string, unknown>; readonly required?: ReadonlyArray<string>; readonly additionalProperties: false }
  readonly annotations: Record<string, boolean | string>
}

/** The four tools, in the order an agent uses them. */
export const TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "search_listings",
    title: "Search repositories for sale",
    description:
      "Find code repositories for sale on this marketplace. Free. Returns live listings that are selling (repo, price in USD, chains, language, topics, stars, checkout_url, test_checkout_url) and next_cursor for the next page. All filters are optional and combine with AND.",
    inputSchema: {
      type: "object",
      properties: {
        q: { type: "string", description: "Free text over name, description, topics and README; words AND, `or` between alternatives, \"quoted phrases\". At most 200 characters." },
        language: { type: "string", description: "Primary language as the code host names it, e.g. TypeScript, Rust, Python." },
        category: { type: "string", enum: [...CATEGORIES], description: "One category of the marketplace's taxonomy." },
        topic: { type: "string", description: "One code-host topic, e.g. x402 or cli." },
        chain: { type: "string", enum: ["base", "solana"], description: "Only listings payable on this chain." },
        max_price_usd: { type: "number", description: "Highest price in US dollars (USDC), e.g. 20 or 19.99." },
        sort: { type: "string", enum: ["relevance", "newest", "price", "stars"], description: "Order; relevance needs q. Default: relevance with q, else newest." },
        cursor: { type: "string", description: "next_cursor of the previous page, with the same filters." },
        limit: { type: "integer", minimum: 1, maximum: 100, description: "Listings per page (default 20)." }
      },
      additionalProperties: false
    },
    annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true }
  },
  {
    name: "get_repo",
    title: "Preview a repository for sale",
    description:
      "Free preview of one listed repository before buying: price (USD and USDC atomic units), chains, file tree, README, default branch and the commit a purchase would pin now, license, stars, checkout_url and test_checkout_url. A large README or tree comes as a preview (readme.truncated, tree.truncated); page_url (the resource_link) is the whole page as JSON.",
    inputSchema: {
      type: "object",
      properties: { repo: { type: "string", description: "owner/name as listed, e.g. octo-org/widget." } },
      required: ["repo"],
      additionalProperties: false
    },
    annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true }
  },
  {
    name: "buy_repo",
    title: "Buy a repository (x402, USDC)",
    description:
      "Buy one repository; paid per the x402 MCP transport. Called without payment it answers payment-required (isError, structuredContent = x402 PaymentRequired with `accepts`: USDC on Base and/or Solana, the same terms as the checkout's HTTP 402). Your x402 wallet signs one of them and calls this tool again with the same arguments and the payment in _meta[\"x402/payment\"]; the paid answer carries the settlement in _meta[\"x402/payment-response\"], the pinned commit, and a receipt link that downloads the .tar.gz for 7 days. Use test_checkout_url to rehearse with simulated money. A payment presented twice is refused (payment_already_used); recover with the receipt, the same payment and its payment-identifier id, or redownload.",
    inputSchema: {
      type: "object",
      properties: {
        checkout_url: checkoutUrl,
        include_archive: {
          type: "boolean",
          description: `Also return the archive's bytes in the result (an embedded application/gzip resource, base64), if it is at most ${EMBED_LIMIT}. Default false: the receipt link is enough to download it.`
        }
      },
      required: ["checkout_url"],
      additionalProperties: false
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  },
  {
    name: "redownload",
    title: "Download a purchase again",
    description:
      "Get a paid repository again, free, without paying twice: give the receipt link of the purchase (valid 7 days), or the checkout_url with a Sign-In-With-X proof (base64 SIGN-IN-WITH-X value) signed by the paying wallet over the `sign-in-with-x` challenge of buy_repo's answer (its payment-required, or its problem when the checkout can no longer be paid, e.g. after a reprice). " +
      `With latest: true, the seller's newer commits within the purchase's update window. Returns the archive (embedded if at most ${EMBED_LIMIT}) and its receipt link. Limited to ${REDOWNLOADS_PER_RECEIPT_PER_HOUR} downloads of one purchase an hour.`,
    inputSchema: {
      type: "object",
      properties: {
        receipt: { type: "string", description: "The receipt link (…/downloads/<token>) of buy_repo's paid answer, or its token." },
        checkout_url: { ...checkoutUrl, description: "With sign_in_with_x: the checkout the wallet paid (any later checkout of the same listing works too)." },
        sign_in_with_x: { type: "string", description: "With checkout_url: the wallet's signed Sign-In-With-X proof, base64, as x402 clients send it in the SIGN-IN-WITH-X header." },
        latest: { type: "boolean", description: "True: the listing's current commit, within the purchase's update window (get_repo's updates_days), as a new signed delivery with its own receipt; refused with updates_not_included, updates_window_closed or listing_taken_down otherwise (the purchased commit stays yours). Default false: the commit paid for." }
      },
      additionalProperties: false
    },
    annotations: { readOnlyHint: true, openWorldHint: true, idempotentHint: true }
  }
]

/** Arguments decoded by `schema`; unknown or mistyped fields are a 400 `invalid_request` naming each field. */
export const decodeArgs = <A, I>(schema: Schema.Schema<A, I>, args: unknown): Either.Either<A, InvalidInput> =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(args ?? {}).pipe(
    Either.mapLeft((error) =>
      InvalidInput.forFields(ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
        new FieldProblem({
          field: issue.path.length === 0 ? "arguments" : issue.path.map(String).join("."),
          message: issue._tag === "Unexpected" ? "is not an argument of this tool" : issue._tag === "Missing" ? "is required" : "has the wrong type"
        })
      )))
  )

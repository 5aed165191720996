import { Clock, Effect, Option, Ref } from "effect"
import { checkoutPath, testCheckoutPath } from "../../domain/Checkout.js"
import { formatUsd } from "../../domain/Money.js"
import { Chain } from "../../domain/Wallet.js"
import { Chains } from "../../ports/Chains.js"
import { PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { Catalog } from "../../domain/usecases/Catalog.js"
import { MCP_PATH, TOOLS } from "../mcp/McpToolList.js"
import { storageAsDefect } from "../Unavailable.js"

/**
 * `/.well-known/x402`: this host's x402 discovery manifest, in the shape of the `discovery` extension proposed in
 * x402-foundation/x402 PR #2979 (specs/extensions/discovery.md; coinbase/x402 issue #869 asked for the URL):
 * `x402Version` (an integer, as in the 402s), `kind: "resource-server"`, `name`, `description`, `docs`,
 * `updated`, and `resources` as **bare pointers** (`url`, `method`, `description`: the 402 stays authoritative
 * for the terms, so nothing here can go stale against it). The extension says unknown fields are ignored; this
 * manifest adds what an agent needs beside the pointers: the payment networks and assets, how to find every
 * checkout (`resourceTemplates`: the checkout URL patterns and the catalog), the MCP server and its paid tool,
 * and links to `/llms.txt`, `/openapi.json` and `/mcp`. Public data only; the same for every caller.
 */

/** How many of the newest selling listings the manifest points to (each with its live and test checkout). */
export const WELL_KNOWN_LISTINGS = 50

/** How long one reading of the catalog serves the manifest: a burst of crawlers is one query a minute. */
export const WELL_KNOWN_MEMO_MS = 60_000

/** What the manifest says of the host. */
const DESCRIPTION =
  "A marketplace of code repositories sold over x402: one payment in USDC on Base or Solana per repository, straight to the seller's wallet; the paid request returns the repository as a .tar.gz. Every listing has a test twin with simulated money."

export interface WellKnownX402 {
  readonly x402Version: 2
  readonly kind: "resource-server"
  readonly [field: string]: unknown
}

/** The manifest for the given pointers and time (pure: the route below reads the catalog and memoizes). */
export const wellKnownX402 = (input: {
  readonly baseUrl: string
  readonly updated: Date
  readonly listings: ReadonlyArray<{ readonly repo: string; readonly checkoutId: string; readonly priceUsd: string }>
  readonly networks: ReadonlyArray<{ readonly chain: Chain; readonly livemode: boolean; readonly network: string; readonly asset: string }>
  readonly livePayments: boolean
}): WellKnownX402 => {
  const { baseUrl } = input
  const buy = TOOLS.find((t) => t.name === "buy_repo")!
  return {
    x402Version: 2,
    kind: "resource-server",
    name: "repomarket",
    description: DESCRIPTION,
    docs: `${baseUrl}/llms.txt`,
    updated: input.updated.toISOString(),
    resources: [
      { url: `${baseUrl}${MCP_PATH}`, method: "POST", description: `MCP server (Streamable HTTP); its tool ${buy.name} is paid per the x402 MCP transport` },
      ...input.listings.flatMap((l) => [
        ...(input.livePayments ? [{ url: baseUrl + checkoutPath(l.checkoutId as never), method: "GET", description: `${l.repo} for ${l.priceUsd} USD as a .tar.gz` }] : []),
        { url: baseUrl + testCheckoutPath(l.checkoutId as never), method: "GET", description: `${l.repo}, test twin (simulated money)` }
      ])
    ],
    resourceTemplates: [
      { url: `${baseUrl}/checkout/{checkout_id}`, method: "GET", description: "A listing's checkout (real USDC): checkout_url of the catalog or the repo page" },
      { url: `${baseUrl}/checkout/{checkout_id}/test`, method: "GET", description: "The same checkout's test twin (simulated money): test_checkout_url" }
    ],
    catalog: `${baseUrl}/listings`,
    payments: {
      scheme: "exact",
      livePayments: input.livePayments,
      networks: input.networks.map((n) => ({ network: n.network, chain: n.chain, livemode: n.livemode })),
      assets: input.networks.map((n) => ({ network: n.network, address: n.asset, symbol: "USDC", decimals: 6, standard: n.chain === "base" ? "EIP-3009" : "SPL" })),
      extensions: ["payment-identifier", "sign-in-with-x", "bazaar"]
    },
    mcp: { url: `${baseUrl}${MCP_PATH}`, transport: "streamable-http", tools: TOOLS.map((t) => t.name), paidTools: [buy.name] },
    links: { llms_txt: `${baseUrl}/llms.txt`, openapi: `${baseUrl}/openapi.json`, mcp: `${baseUrl}${MCP_PATH}`, docs: `${baseUrl}/docs` }
  }
}

/** Builds the manifest answer: the newest selling listings read at most once a minute, the rest fixed. */
export const wellKnownX402Route = Effect.gen(function*() {
  const { baseUrl } = yield* PublicOrigin
  const catalog = yield* storageAsDefect(Catalog)
  const chains = yield* Chains
  const facilitators = yield* PaymentFacilitator
  const livePayments = Option.isSome(facilitators.live)
  const networks = Chain.literals.flatMap((chain) => [true, false].map((livemode) => chains.facts(chain, livemode)))
  const memo = yield* Ref.make(Option.none<{ readonly at: number; readonly manifest: WellKnownX402 }>())
  const started = new Date(yield* Clock.currentTimeMillis)
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const kept = yield* Ref.get(memo)
    if (Option.isSome(kept) && now - kept.value.at < WELL_KNOWN_MEMO_MS) return kept.value.manifest
    const { page } = yield* catalog.search({ sort: "newest", limit: String(WELL_KNOWN_LISTINGS) })
    const listings = page.entries.map((e) => ({ repo: e.listing.repo.slug, checkoutId: e.listing.checkoutId, priceUsd: formatUsd(e.listing.price ?? 0n) }))
    // Changed last when the newest listing was listed (or, with none, when this server started).
    const updated = page.entries[0]?.listing.createdAt ?? started
    const manifest = wellKnownX402({ baseUrl, updated, listings, networks, livePayments })
    yield* Ref.set(memo, Option.some({ at: now, manifest }))
    return manifest
  })
})

import type { HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Either, type Scope } from "effect"
import { InvalidInput } from "../../domain/Errors.js"
import { type CheckoutId } from "../../domain/Ids.js"
import { Catalog } from "../../domain/usecases/Catalog.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import { Redownloads } from "../../domain/usecases/Redownloads.js"
import { Storefront } from "../../domain/usecases/Storefront.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { catalogPageView } from "../CatalogViews.js"
import { catalogGate, publicSearchCost } from "../handlers/CatalogLimits.js"
import { clientAddress } from "../handlers/ClientAddress.js"
import { failedSettlement } from "../handlers/Offer402.js"
import { publicPageCharge } from "../handlers/PageHandlers.js"
import { repoPageView } from "../Views.js"
import { BuyArgs, decodeArgs, GetRepoArgs, RedownloadArgs, SearchArgs } from "./McpToolList.js"
import { makeOffer, paymentOf } from "./McpPayment.js"
import { dataResult, diedResult, goodsResult, problemOf, problemResult, repoResult, type ToolError, type ToolResult } from "./McpResults.js"
import { storageAsDefect } from "../Unavailable.js"

/** What a tool call runs in: the request it came with (for the client's address), and a scope for downloads. */
export type ToolContext = HttpServerRequest.HttpServerRequest | Scope.Scope

/** The tools' implementation: one call per `tools/call`, never failing (every failure is a tool result). */
export interface McpTools {
  readonly call: (name: string, args: unknown, meta: Readonly<Record<string, unknown>> | undefined) => Effect.Effect<ToolResult, never, ToolContext>
}

/**
 * A checkout URL this server handed out (`…/checkout/<id>`, or `…/checkout/<id>/test` for the test twin), on
 * this server's own origin. Anything else is a 400 naming `field`: a purchase is never made at an address the
 * agent did not get from this marketplace.
 */
export const checkoutOf = (url: string, baseUrl: string, field = "checkout_url"): Either.Either<{ readonly id: CheckoutId; readonly livemode: boolean }, InvalidInput> => {
  const refused = InvalidInput.forField(field, `must be a checkout_url or test_checkout_url of this marketplace (${baseUrl}/checkout/<id>[/test])`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left(refused)
  }
  const match = /^\/checkout\/([A-Za-z0-9_-]{1,100})(\/test)?\/?$/.exec(parsed.pathname)
  if (parsed.origin !== new URL(baseUrl).origin || match === null || match[1] === "solana") return Either.left(refused)
  return Either.right({ id: match[1] as CheckoutId, livemode: match[2] === undefined })
}

/** The token of a receipt link (`…/downloads/<token>`) or a bare token. */
const receiptToken = (receipt: string): string => {
  const at = receipt.lastIndexOf("/downloads/")
  return (at === -1 ? receipt : receipt.slice(at + "/downloads/".length)).split(/[?#]/, 1)[0]!
}

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

/**
 * The MCP tools over the same use cases as the HTTP API, with the same limits, counted as each call runs:
 * searches and previews count against the client address's public-page budget (the same limiter key as the
 * HTTP pages and catalog; a text search as several), searches wait for the process's one catalog gate (the
 * HTTP catalog's), purchases go through `Purchases.pay` (its attempt limit, replay and
 * payment-identifier rules, local signature checks, settlement outcomes), re-downloads through `Redownloads`
 * (its per-receipt and per-client limits).
 */
export const makeMcpTools = Effect.gen(function*() {
  const catalog = yield* storageAsDefect(Catalog)
  const storefront = yield* storageAsDefect(Storefront)
  const purchases = yield* storageAsDefect(Purchases)
  const redownloads = yield* storageAsDefect(Redownloads)
  const { baseUrl } = yield* PublicOrigin
  const charge = yield* publicPageCharge
  const searchCost = yield* publicSearchCost
  // The process's one catalog gate, the HTTP catalog's (CatalogLimits.ts).
  const gate = yield* catalogGate
  const offer = makeOffer(purchases, redownloads)

  const search = (args: unknown) =>
    Effect.gen(function*() {
      const a = yield* fromEither(decodeArgs(SearchArgs, args))
      const params = {
        ...a,
        max_price_usd: a.max_price_usd === undefined ? undefined : String(a.max_price_usd),
        limit: a.limit === undefined ? undefined : String(a.limit)
      }
      yield* charge(params.q !== undefined && params.q.trim() !== "" ? searchCost : 1)
      const result = yield* gate.run(catalog.search(params))
      return dataResult(catalogPageView(result, baseUrl))
    })

  const getRepo = (args: unknown) =>
    Effect.gen(function*() {
      const { repo } = yield* fromEither(decodeArgs(GetRepoArgs, args))
      const [owner, name, ...rest] = repo.trim().replace(/^https?:\/\/[^/]+\/r\//, "").split("/")
      if (owner === undefined || name === undefined || rest.length > 0) {
        return yield* InvalidInput.forField("repo", "must be owner/name, e.g. octo-org/widget")
      }
      yield* charge(1)
      return repoResult(repoPageView(yield* storefront.repoPage(owner, name, yield* clientAddress), baseUrl), baseUrl)
    })

  const buy = (args: unknown, meta: Readonly<Record<string, unknown>> | undefined) =>
    Effect.gen(function*() {
      const a = yield* fromEither(decodeArgs(BuyArgs, args))
      const { id, livemode } = yield* fromEither(checkoutOf(a.checkout_url, baseUrl))
      const payment = yield* fromEither(paymentOf(meta))
      if (payment === null) return yield* offer(id, livemode)
      const client = yield* clientAddress
      return yield* purchases.pay(id, livemode, payment, client).pipe(
        Effect.flatMap((goods) => goodsResult(goods, { embed: a.include_archive === true, paid: true })),
        // A refused or failed payment is answered the x402 way: payment-required with fresh terms to pay again.
        Effect.catchTags({
          PaymentRejected: (e) => offer(id, livemode, { reason: e.reason, detail: e.detail }),
          SettlementFailed: (e) =>
            offer(id, livemode, { reason: e.reason, detail: e.detail, settlement: failedSettlement(e) })
        })
      )
    })

  const redownload = (args: unknown) =>
    Effect.gen(function*() {
      const a = yield* fromEither(decodeArgs(RedownloadArgs, args))
      const client = yield* clientAddress
      if (a.receipt !== undefined && a.checkout_url === undefined && a.sign_in_with_x === undefined) {
        const token = receiptToken(a.receipt)
        const goods = yield* (a.latest === true ? redownloads.latestByReceipt(token, client) : redownloads.byReceipt(token, client))
        return yield* goodsResult(goods, { embed: true, paid: false })
      }
      if (a.receipt === undefined && a.checkout_url !== undefined && a.sign_in_with_x !== undefined) {
        const { id, livemode } = yield* fromEither(checkoutOf(a.checkout_url, baseUrl))
        return yield* redownloads.redeem(id, livemode, a.sign_in_with_x, client, a.latest === true).pipe(
          Effect.flatMap((goods) => goodsResult(goods, { embed: true, paid: false })),
          // Refused (a stale nonce, another wallet, nothing bought): a fresh challenge naming the reason.
          Effect.catchTag("WalletProofRefused", (e) => offer(id, livemode, { reason: e.reason, detail: e.detail }))
        )
      }
      return yield* InvalidInput.forField("arguments", "give either receipt, or checkout_url with sign_in_with_x")
    })

  const unknownTool = (name: string) =>
    Effect.succeed(problemResult(problemOf(InvalidInput.forField("name", `${JSON.stringify(name.slice(0, 64))} is not a tool of this server (search_listings, get_repo, buy_repo, redownload)`))))

  const call: McpTools["call"] = (name, args, meta) => {
    const run: Effect.Effect<ToolResult, ToolError, ToolContext> =
      name === "search_listings" ? search(args)
      : name === "get_repo" ? getRepo(args)
      : name === "buy_repo" ? buy(args, meta)
      : name === "redownload" ? redownload(args)
      : unknownTool(name)
    return run.pipe(
      Effect.catchAll((e) => Effect.succeed(problemResult(problemOf(e)))),
      // A storage failure (carried as a defect, see Unavailable.ts) or any other: the HTTP answer's problem.
      // An interrupted call (the client went away) stays interrupted.
      Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : diedResult(cause))
    )
  }

  return { call } satisfies McpTools
})

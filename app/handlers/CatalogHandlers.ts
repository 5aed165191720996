import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { FieldProblem, InvalidInput } from "../../domain/Errors.js"
import { CATALOG_PARAMS } from "../../domain/rules/CatalogQuery.js"
import { Catalog } from "../../domain/usecases/Catalog.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { catalogPageView, homeView } from "../CatalogViews.js"
import { catalogPageHtml, homePageHtml } from "../pages/CatalogPages.js"
import { problemOf, problemPage } from "../pages/ErrorPage.js"
import { html } from "../pages/Html.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { CatalogGate, publicSearchCost } from "./CatalogLimits.js"
import { publicPageCharge } from "./PageHandlers.js"
import { storageAsDefect } from "../Unavailable.js"

const varyAccept = HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeader(res, "vary", "Accept")))

const back = html`<p><a href="/listings">See everything for sale</a>.</p>`

/**
 * Parameters the catalog does not know, or sent twice, are refused rather than ignored: an agent that
 * misspells `max_price_usd` must not be shown dearer repositories as if the filter held.
 */
const strictParams = Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
  const search = new URL(req.url, "http://x").searchParams
  const names = [...search.keys()]
  const problems = [...new Set(names)].flatMap((name) =>
    !(CATALOG_PARAMS as ReadonlyArray<string>).includes(name)
      ? [new FieldProblem({ field: name, message: `is not a parameter of /listings (known: ${CATALOG_PARAMS.join(", ")})` })]
      : search.getAll(name).length > 1 ? [new FieldProblem({ field: name, message: "must be given once" })] : [])
  return problems.length === 0 ? Effect.void : Effect.fail(InvalidInput.forFields(problems))
})

export const CatalogHandlers = HttpApiBuilder.group(Api, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* storageAsDefect(Catalog)
    const { baseUrl } = yield* PublicOrigin
    // The same budget as the /r/ pages: one client address, one count of public pages a minute, of which a
    // text search spends several (CatalogLimits.ts); the database's share for catalog reads is capped too, by
    // the process's one gate (the MCP search waits for the same slots).
    const charge = yield* publicPageCharge
    const searchCost = yield* publicSearchCost
    const gate = yield* CatalogGate
    const countPage = charge(1)
    const hasText = (q: string | undefined) => q !== undefined && q.trim() !== ""
    const wantsHtml = Effect.map(HttpServerRequest.HttpServerRequest, (req) => prefersHtml(req.headers["accept"]))
    return handlers
      .handle("listings", ({ urlParams }) =>
        Effect.gen(function*() {
          yield* varyAccept
          const result = charge(hasText(urlParams.q) ? searchCost : 1).pipe(
            Effect.zipRight(strictParams),
            Effect.zipRight(gate.run(catalog.search(urlParams)))
          )
          if (!(yield* wantsHtml)) return yield* Effect.map(result, (r) => catalogPageView(r, baseUrl))
          return yield* result.pipe(
            Effect.map((r) => catalogPageHtml(r, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
      .handle("home", () =>
        Effect.gen(function*() {
          yield* varyAccept
          const home = Effect.zipRight(countPage, gate.run(catalog.home()))
          if (!(yield* wantsHtml)) return yield* Effect.map(home, (h) => homeView(h, baseUrl))
          return yield* home.pipe(
            Effect.map((h) => homePageHtml(h, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
  }))

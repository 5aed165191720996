import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Config, Effect } from "effect"
import { RateLimited } from "../../domain/Errors.js"
import { Storefront } from "../../domain/usecases/Storefront.js"
import { RateLimiter } from "../../ports/RateLimiter.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { problemOf, problemPage } from "../pages/ErrorPage.js"
import { html } from "../pages/Html.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { ownerPageHtml } from "../pages/OwnerPage.js"
import { repoPageHtml } from "../pages/RepoPage.js"
import { ownerPageView, repoPageView } from "../Views.js"
import { clientAddress } from "./ClientAddress.js"
import { storageAsDefect } from "../Unavailable.js"

/** Caches must keep the JSON and the HTML of one URL apart. */
const varyAccept = HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeader(res, "vary", "Accept")))

const wantsHtml = Effect.map(HttpServerRequest.HttpServerRequest, (req) => prefersHtml(req.headers["accept"]))

const back = html`<p>Nothing is for sale at this address, or it was taken down. Sellers: <a href="/signin">sign in</a> to list a repository.</p>`

/**
 * `PUBLIC_PAGES_PER_MINUTE` (default 120; 0 turns the limit off): the public pages cost calls to the code
 * host (an owner's index, a listing's preview) paid from the server's shared quota, so each client address
 * may ask for this many a minute. Answers the front door serves from memory cost nothing and are not counted.
 */
export const publicPagesPerMinute = Config.integer("PUBLIC_PAGES_PER_MINUTE").pipe(
  Config.withDefault(120),
  Config.validate({ message: "PUBLIC_PAGES_PER_MINUTE must be a whole number from 0 to 1000000", validation: (n) => n >= 0 && n <= 1_000_000 })
)

/**
 * Builds the step that counts public pages for the caller's address (before anything is asked of the code host
 * or the database): one budget shared by every public page, the /r/ pages, the home page and the catalog.
 * `cost` is how many page views a request counts as (a text search counts as several; never more than the
 * whole budget, so it always fits in an unspent minute).
 */
export const publicPageCharge = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  const perMinute = yield* publicPagesPerMinute
  return (cost: number) =>
    Effect.flatMap(clientAddress, (client) =>
      perMinute === 0 ? Effect.void : limiter.consume(`public-pages:client:${client}`, perMinute, 60_000, Math.min(cost, perMinute)).pipe(
        Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: "Too many page views from this address; try again shortly." }))
      ))
})

/** Builds the step that counts one public page for the caller's address (see `publicPageCharge`). */
export const publicPageCounter = Effect.map(publicPageCharge, (charge) => charge(1))

export const PagesHandlers = HttpApiBuilder.group(Api, "pages", (handlers) =>
  Effect.gen(function*() {
    const storefront = yield* storageAsDefect(Storefront)
    const { baseUrl } = yield* PublicOrigin
    const countPage = yield* publicPageCounter
    return handlers
      .handle("ownerPage", ({ path }) =>
        Effect.gen(function*() {
          yield* varyAccept
          const page = Effect.zipRight(countPage, storefront.ownerPage(path.owner))
          if (!(yield* wantsHtml)) return yield* Effect.map(page, (p) => ownerPageView(p, baseUrl))
          return yield* page.pipe(
            Effect.map((p) => ownerPageHtml(p, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
      .handle("repoPage", ({ path }) =>
        Effect.gen(function*() {
          yield* varyAccept
          const page = Effect.zipRight(countPage, Effect.flatMap(clientAddress, (client) => storefront.repoPage(path.owner, path.repo, client)))
          if (!(yield* wantsHtml)) return yield* Effect.map(page, (p) => repoPageView(p, baseUrl))
          return yield* page.pipe(
            Effect.map((p) => repoPageHtml(p, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
  }))

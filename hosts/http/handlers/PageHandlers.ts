import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Storefront } from "../../../domain/usecases/Storefront.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { problemOf, problemPage } from "../pages/ErrorPage.js"
import { html } from "../pages/Html.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { ownerPageHtml } from "../pages/OwnerPage.js"
import { repoPageHtml } from "../pages/RepoPage.js"
import { ownerPageView, repoPageView } from "../Views.js"

/** Caches must keep the JSON and the HTML of one URL apart. */
const varyAccept = HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeader(res, "vary", "Accept")))

const wantsHtml = Effect.map(HttpServerRequest.HttpServerRequest, (req) => prefersHtml(req.headers["accept"]))

const back = html`<p>Nothing is for sale at this address, or it was taken down. Sellers: <a href="/signin">sign in</a> to list a repository.</p>`

export const PagesHandlers = HttpApiBuilder.group(Api, "pages", (handlers) =>
  Effect.gen(function*() {
    const storefront = yield* Storefront
    const { baseUrl } = yield* PublicOrigin
    return handlers
      .handle("ownerPage", ({ path }) =>
        Effect.gen(function*() {
          yield* varyAccept
          if (!(yield* wantsHtml)) return yield* Effect.map(storefront.ownerPage(path.owner), (p) => ownerPageView(p, baseUrl))
          return yield* storefront.ownerPage(path.owner).pipe(
            Effect.map((p) => ownerPageHtml(p, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
      .handle("repoPage", ({ path }) =>
        Effect.gen(function*() {
          yield* varyAccept
          if (!(yield* wantsHtml)) return yield* Effect.map(storefront.repoPage(path.owner, path.repo), (p) => repoPageView(p, baseUrl))
          return yield* storefront.repoPage(path.owner, path.repo).pipe(
            Effect.map((p) => repoPageHtml(p, baseUrl)),
            Effect.catchAll((e) => Effect.succeed(problemPage(problemOf(e), back)))
          )
        }))
  }))

import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Storefront } from "../../../domain/usecases/Storefront.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { ownerPageView, repoPageView } from "../Views.js"

export const PagesHandlers = HttpApiBuilder.group(Api, "pages", (handlers) =>
  Effect.gen(function*() {
    const storefront = yield* Storefront
    const { baseUrl } = yield* PublicOrigin
    return handlers
      .handle("ownerPage", ({ path }) => Effect.map(storefront.ownerPage(path.owner), (p) => ownerPageView(p, baseUrl)))
      .handle("repoPage", ({ path }) =>
        Effect.map(storefront.repoPage(path.owner, path.repo), (p) => repoPageView(p, baseUrl)))
  }))


import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { NotImplemented } from "../../../domain/Errors.js"
import { Purchases } from "../../../domain/usecases/Purchases.js"
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

export const CheckoutHandlers = HttpApiBuilder.group(Api, "checkout", (handlers) =>
  Effect.gen(function*() {
    const purchases = yield* Purchases
    const notYet = new NotImplemented({ detail: "x402 payments are not available on this server yet." })
    return handlers
      .handle("checkout", ({ path }) => Effect.zipRight(purchases.current(path.id), notYet))
      .handle("testCheckout", ({ path }) => Effect.zipRight(purchases.current(path.id), notYet))
  }))

import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Listings } from "../../domain/usecases/Listings.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { CurrentPrincipal, MaybePrincipal } from "../Security.js"
import { createdListing, listingView } from "../Views.js"
import { clientAddress } from "./ClientAddress.js"
import { storageAsDefect } from "../Unavailable.js"

export const ListingCreateHandlers = HttpApiBuilder.group(Api, "listingCreate", (handlers) =>
  Effect.gen(function*() {
    const listings = yield* storageAsDefect(Listings)
    const { baseUrl } = yield* PublicOrigin
    return handlers.handle("createListing", ({ payload }) =>
      Effect.gen(function*() {
        const principal = Option.getOrNull(yield* MaybePrincipal)
        const listing = yield* listings.create(payload, principal, yield* clientAddress)
        return createdListing(listing, baseUrl)
      }))
  }))

export const ListingsHandlers = HttpApiBuilder.group(Api, "listings", (handlers) =>
  Effect.gen(function*() {
    const listings = yield* storageAsDefect(Listings)
    const { baseUrl } = yield* PublicOrigin
    return handlers
      .handle("updateListing", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => listings.update(path.owner, path.repo, payload, p)).pipe(
          Effect.map((l) => listingView(l, baseUrl))
        ))
      .handle("takedown", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => listings.takedown(path.owner, path.repo, p)))
  }))

import { Effect, Option } from "effect"
import { repoPagePath } from "../Checkout.js"
import { CheckoutGone, NotFound, NotImplemented } from "../Errors.js"
import type { CheckoutId } from "../Ids.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"

/**
 * The checkout. A voided checkout (repriced, re-walleted, taken down) answers "gone" and points to the
 * repo page; payment itself arrives with the payments work.
 */
export class Purchases extends Effect.Service<Purchases>()("usecases/Purchases", {
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const origin = yield* PublicOrigin

    const current = Effect.fn("Purchases.current")(function*(id: string) {
      const checkout = yield* store.findCheckout(id as CheckoutId)
      if (Option.isNone(checkout)) return yield* new NotFound({ detail: "No such checkout." })
      if (checkout.value.isVoid) {
        const page = `${origin.baseUrl}${repoPagePath(checkout.value.repo)}`
        return yield* new CheckoutGone({
          page,
          detail: `This checkout was replaced or withdrawn; see ${page} for the current one.`
        })
      }
      return checkout.value
    })

    const challenge = Effect.fn("Purchases.challenge")(function*(id: string, _livemode: boolean) {
      yield* current(id)
      return yield* new NotImplemented({ detail: "x402 payments are not available on this server yet." })
    })

    return { current, challenge } as const
  })
}) {}

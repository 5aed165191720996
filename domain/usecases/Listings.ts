import { Effect, Option } from "effect"
import type { Principal } from "../Credentials.js"
import { Forbidden, NotFound } from "../Errors.js"
import { FieldErrors } from "../rules/Fields.js"
import { accessTo } from "../rules/Ownership.js"
import { takeDown } from "../rules/Takedown.js"
import { now } from "../rules/Clock.js"
import { HostTokens } from "./HostTokens.js"
import { makeCreate } from "./listings/Create.js"
import { listingDeps } from "./listings/Deps.js"
import { makeTerms } from "./listings/Terms.js"
import type { UpdateListingInput } from "./listings/Types.js"

export type { CreateListingInput, UpdateListingInput } from "./listings/Types.js"
export { ANONYMOUS_LISTINGS_PER_HOUR } from "./listings/Create.js"

/**
 * Listing repos for sale: create (anonymously or signed in), update terms, take down, the seller's inventory, and
 * opening a listing's sealed code-host token. A change of terms voids the checkout and mints a new one (a change of
 * the update window alone keeps it: it is no term the checkout snapshots). Creating
 * and the terms it shares with updating live in their own files under `listings/`; this service wires them.
 */
export class Listings extends Effect.Service<Listings>()("usecases/Listings", {
  dependencies: [HostTokens.Default],
  effect: Effect.gen(function*() {
    const deps = yield* listingDeps
    const { accountOf, catalog, factsOf, lookUp, store, tx } = deps
    const { tokenOf } = deps.tokens
    const changes = makeTerms(deps)
    const { readTerms, saveTerms } = changes
    const create = makeCreate(deps, changes)

    /** The live listing the principal owns, or the reason they cannot touch it. */
    const owned = Effect.fnUntraced(function*(owner: string, name: string, principal: Principal) {
      const listing = yield* Effect.flatten(store.findLive(owner, name)).pipe(
        Effect.mapError(() => new NotFound({ detail: `No live listing for ${owner}/${name}.` }))
      )
      const account = yield* accountOf(principal)
      if (accessTo(listing, account) !== "owner") {
        return yield* new Forbidden({ detail: `${listing.repo.slug} is listed by another account.` })
      }
      return { listing, account }
    })

    const update = Effect.fn("Listings.update")(function*(
      owner: string,
      name: string,
      input: UpdateListingInput,
      principal: Principal
    ) {
      const errors = new FieldErrors()
      const terms = yield* readTerms(errors, input)
      yield* errors.check
      const { listing: current, account } = yield* owned(owner, name, principal)
      // A new token must work before it is stored; the repo's privacy may have changed meanwhile.
      const info = terms.hostPat._tag === "Set"
        ? yield* lookUp(current.repo, Option.some(terms.hostPat.value))
        : null
      const at = yield* now
      const saved = yield* Effect.flatten(saveTerms(current, terms, account, info, at)).pipe(
        Effect.mapError(() => new NotFound({ detail: `No live listing for ${owner}/${name}.` }))
      )
      // A new token is a fresh look at the repo: the catalog's facts follow.
      if (info !== null && terms.hostPat._tag === "Set") yield* catalog.describe(saved, yield* factsOf(info, Option.some(terms.hostPat.value)))
      return saved
    })

    const takedown = Effect.fn("Listings.takedown")(function*(owner: string, name: string, principal: Principal) {
      const { listing } = yield* owned(owner, name, principal)
      const at = yield* now
      yield* tx.withTransaction(
        Effect.all([store.update(takeDown(listing, at)), store.voidCheckout(listing.checkoutId, at)], { discard: true })
      )
    })

    /** The account's live listings (`GET /my/stores`). */
    const inventory = (principal: Principal) => store.listByAccount(principal.accountId, { includeTakenDown: false })

    return { create, update, takedown, inventory, tokenOf } as const
  })
}) {}

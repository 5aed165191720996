import { Effect, Either, Option } from "effect"
import type { Principal } from "../../Credentials.js"
import { AlreadyListed, RateLimited } from "../../Errors.js"
import { type CheckoutId, IdPrefix, type ListingId } from "../../Ids.js"
import { Listing } from "../../Listing.js"
import { noWallets } from "../../Wallet.js"
import { FieldErrors } from "../../rules/Fields.js"
import { parseHostUrl } from "../../rules/HostUrl.js"
import { accessTo } from "../../rules/Ownership.js"
import { takeDown } from "../../rules/Takedown.js"
import { now } from "../../rules/Clock.js"
import { newId } from "../Minting.js"
import { CodeHostIdentity } from "../../../ports/CodeHostIdentity.js"
import { SecretBox } from "../../../ports/SecretBox.js"
import { controlsThroughConnection } from "../HostConnection.js"
import type { ListingDeps } from "./Deps.js"
import type { makeTerms } from "./Terms.js"
import type { CreateListingInput } from "./Types.js"

/** Anonymous listing limit decided in DECISIONS.md. */
export const ANONYMOUS_LISTINGS_PER_HOUR = 30

/**
 * Listing a repo (`POST /repos`), anonymously or signed in: a new listing, the owner's own re-listing (an update),
 * or a takeover by proven control of the repo through the code-host connection.
 */
export const makeCreate = (
  { accountOf, box, catalog, factsOf, identity, limiter, lookUp, store, tokens: { tokenOf }, tx, withPorts }: ListingDeps,
  { buildTerms, currentAccount, prepareTerms, readTerms, saveTerms }: ReturnType<typeof makeTerms>
) => {
  const create = Effect.fn("Listings.create")(function*(
    input: CreateListingInput,
    principal: Principal | null,
    client: string
  ) {
    const errors = new FieldErrors()
    const parsed = Either.getOrNull(Either.mapLeft(parseHostUrl(input.host_url), (m) => errors.add("host_url", m)))
    const terms = yield* readTerms(errors, input)
    yield* errors.check
    if (principal === null) {
      yield* limiter.consume(`listing:anonymous:${client}`, ANONYMOUS_LISTINGS_PER_HOUR, 3_600_000).pipe(
        Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: "Too many anonymous listings from this address; sign in or try later." }))
      )
    }
    const account = yield* accountOf(principal)
    // Re-listing one's own repo without host_pat keeps the stored token (absent keeps), so the code host is
    // asked with it; nobody else's stored token is ever used on their behalf.
    const own = Option.filter(yield* store.findLive(parsed!.owner, parsed!.name), (l) => accessTo(l, account) === "owner")
    const token = terms.hostPat._tag === "Set"
      ? Option.some(terms.hostPat.value)
      : terms.hostPat._tag === "Keep" && Option.isSome(own) ? yield* tokenOf(own.value) : Option.none()
    const info = yield* lookUp(parsed!, token)
    const facts = yield* factsOf(info, token)
    const at = yield* now
    let existing = yield* store.findLive(info.ref.owner, info.ref.name)
    if (Option.isSome(existing)) {
      let access = accessTo(existing.value, account)
      // Not the owner's login (an organisation's repo, say): GitHub, asked with the connected login's own
      // token, may still say that login administers the repo. That is proof of control too.
      if (access === "none" && account !== null) {
        const proven = yield* controlsThroughConnection(account, info.ref).pipe(
          Effect.provideService(CodeHostIdentity, identity),
          Effect.provideService(SecretBox, box)
        )
        if (proven) access = "proven_control"
      }
      if (access === "none") {
        return yield* new AlreadyListed({ repo: info.ref.slug, detail: `${info.ref.slug} is already listed by another party.` })
      }
      if (access === "owner") {
        // Re-listing one's own repo updates it: sent fields change, the checkout is rebuilt.
        const saved = yield* saveTerms(existing.value, terms, account, info, at)
        if (Option.isSome(saved)) return yield* Effect.as(catalog.describe(saved.value, facts), saved.value)
        // Taken down meanwhile: list it afresh, as if this request had come a moment later.
        existing = Option.none()
      }
    }
    const id = yield* withPorts(newId<ListingId>(IdPrefix.listing))
    const blank = new Listing({
      id,
      repo: info.ref,
      accountId: account?.id ?? null,
      hostUrl: info.htmlUrl,
      isPrivate: info.isPrivate,
      description: info.description,
      language: info.language,
      price: null,
      payTo: noWallets,
      hostPat: null,
      checkoutId: "" as CheckoutId,
      status: "live",
      createdAt: at,
      updatedAt: at,
      takenDownAt: null
    })
    const prepared = yield* prepareTerms(blank, terms, info)
    return yield* tx.withTransaction(Effect.gen(function*() {
      const { listing, checkout } = buildTerms(blank, prepared, terms, yield* currentAccount(account), info, at)
      // Proven control of the repo through the code-host connection takes the listing over.
      if (Option.isSome(existing)) {
        yield* store.update(takeDown(existing.value, at))
        yield* store.voidCheckout(existing.value.checkoutId, at)
      }
      yield* store.insert(listing)
      yield* store.insertCheckout(checkout)
      yield* catalog.describe(listing, facts)
      return listing
    })).pipe(
      Effect.catchTag("LiveListingExists", () =>
        new AlreadyListed({ repo: info.ref.slug, detail: `${info.ref.slug} is already listed by another party.` }))
    )
  })

  return create
}

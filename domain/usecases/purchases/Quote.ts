import { Effect, Option } from "effect"
import { checkoutPath, testCheckoutPath } from "../../Checkout.js"
import { CheckoutGone, NotFound, NotSelling, PaymentsUnavailable } from "../../Errors.js"
import type { CheckoutId } from "../../Ids.js"
import { offerClaimsOf, type Pin, unixSeconds } from "../../ReceiptClaims.js"
import { requirementsOf } from "../../rules/Requirements.js"
import { isSelling } from "../../rules/Selling.js"
import { now } from "../../rules/Clock.js"
import type { Facilitator } from "../../../ports/PaymentFacilitator.js"
import { cannotDeliver } from "../HostErrors.js"
import type { PurchaseDeps } from "./Deps.js"
import { facilitatorUnavailable, LIVE_PAYMENTS_OFF } from "./Messages.js"
import type { Quote } from "./Types.js"

/** The current checkout, the facilitator of a mode and the 402 offer. */
export const makeQuoting = ({ baseUrl, chains, cuts, facilitators, host, pageOf, signer, store, tokens }: PurchaseDeps) => {
  /** The checkout, if it is current: unknown is 404, voided (repriced, re-walleted, taken down) is 410. */
  const current = Effect.fn("Purchases.current")(function*(id: string) {
    const found = yield* store.findCheckoutWithListing(id as CheckoutId)
    if (Option.isNone(found)) return yield* new NotFound({ detail: "No such checkout." })
    const { checkout, listing } = found.value
    const page = pageOf(checkout.repo)
    // Current means: not voided, and still the listing's own checkout. The second test also catches a
    // checkout orphaned by two concurrent reprices, so no stale price can ever be paid.
    if (checkout.isVoid || Option.isNone(listing) || !listing.value.isLive || listing.value.checkoutId !== checkout.id) {
      return yield* new CheckoutGone({ page, detail: `This checkout was replaced or withdrawn; see ${page} for the current one.` })
    }
    return { checkout, listing: listing.value, page }
  })

  const facilitatorFor = (livemode: boolean): Effect.Effect<Facilitator, PaymentsUnavailable> =>
    livemode
      ? Option.match(facilitators.live, {
        onNone: () => Effect.fail(new PaymentsUnavailable({ detail: LIVE_PAYMENTS_OFF })),
        onSome: Effect.succeed
      })
      : Effect.succeed(facilitators.test)

  /** A facilitator step that moves no money did not answer: 503, nothing charged. */
  const unavailable = (what: string) => () => new PaymentsUnavailable({ detail: facilitatorUnavailable(what) })

  /** The terms a checkout offers now: one requirement per chain the listing has a payout address for. */
  const priced = Effect.fn("Purchases.quote")(function*(id: string, livemode: boolean) {
    const { checkout, listing, page } = yield* current(id)
    if (!isSelling(listing) || checkout.price === null || checkout.chains.length === 0) {
      return yield* new NotSelling({ page, detail: "This listing is not selling right now (no price or no payout wallet)." })
    }
    yield* facilitatorFor(livemode)
    // A chain the facilitator cannot serve right now (e.g. it names no Solana fee payer) is left out of
    // the offer; with no chain left there is nothing to pay.
    const extras = yield* Effect.forEach(checkout.chains, (chain) =>
      Effect.map(Effect.option(facilitators.extra(chain, livemode)), (extra) => [chain, extra] as const))
    const extraOf = new Map(extras.flatMap(([chain, extra]) => Option.isSome(extra) ? [[chain, extra.value] as const] : []))
    if (extraOf.size === 0) return yield* unavailable("describe its payment options")()
    const resource = baseUrl + (livemode ? checkoutPath(checkout.id) : testCheckoutPath(checkout.id))
    const requirements = requirementsOf(checkout, livemode, resource, (c) => chains.facts(c, livemode), (c) => extraOf.get(c) ?? {})
      .filter((r) => extraOf.has(r.chain))
    return { checkout, listing, livemode, requirements, resource, page } satisfies Omit<Quote, "pin" | "offers">
  })

  /**
   * The 402 offer: the terms, pinned to the commit at the head of the listing's default branch as the code host
   * says now (its archive's digest too, once cut: the first offer of a commit cuts it), each requirement with its signed offer. A code host that
   * cannot say is a 503: there is no offer without the commit it sells. `client` (the caller's address, when the
   * door passes it) counts the cut among that client's (see ArchiveCuts).
   */
  const quote = Effect.fn("Purchases.offer")(function*(id: string, livemode: boolean, client?: string) {
    const terms = yield* priced(id, livemode)
    const { listing, requirements } = terms
    const token = yield* tokens.tokenOf(listing)
    const info = yield* host.repo(listing.repo, token).pipe(Effect.mapError(cannotDeliver))
    // The test twin delivers a manifest made for each sale, never the commit's archive: its offers name no digest.
    // A live offer names its commit's digest once the archive is cut: the first offer of a commit starts that
    // cut and waits a moment for it (see ArchiveCuts).
    const pin: Pin = {
      commit: info.headSha,
      archive: terms.livemode
        ? Option.getOrNull(yield* cuts.digestForOffer(listing.repo, info.headSha, token, { listing: listing.id, owner: listing.repo.owner, client }))
        : null
    }
    const at = unixSeconds(yield* now)
    const sold = { listing: listing.id, repository: listing.repo.slug, updatesDays: listing.updatesDays }
    const offers = yield* Effect.forEach(requirements, (r) => signer.sign(offerClaimsOf(r, sold, pin, at + r.maxTimeoutSeconds)))
    return { ...terms, pin, offers } satisfies Quote
  })

  return { current, facilitatorFor, unavailable, priced, quote } as const
}

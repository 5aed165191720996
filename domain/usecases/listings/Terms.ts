import { Effect, Option, Redacted } from "effect"
import type { Account } from "../../Account.js"
import { buildCheckout } from "../../Checkout.js"
import { type CheckoutId, IdPrefix, type SealedSecret } from "../../Ids.js"
import { hostPatAad, Listing } from "../../Listing.js"
import type { AtomicAmount } from "../../Money.js"
import { type FieldErrors, pricePatch, updatesDaysPatch, walletPatches } from "../../rules/Fields.js"
import { resolvePayTo, type WalletPatches } from "../../rules/PayoutResolution.js"
import { apply, fromField, isKeep, type Patch } from "../../rules/ThreeState.js"
import { newId } from "../Minting.js"
import type { RepoInfo } from "../../../ports/CodeHost.js"
import type { ListingDeps } from "./Deps.js"
import type { UpdateListingInput } from "./Types.js"

/** The terms a request sets: each a patch of the listing's (kept, set or cleared). */
export interface Terms {
  readonly price: Patch<AtomicAmount>
  readonly wallets: WalletPatches
  readonly hostPat: Patch<Redacted.Redacted<string>>
  /** The update window in days; cleared is 0. Not a term of the checkout (see `keepsCheckout`). */
  readonly updatesDays: Patch<number>
}

const patPatch = (input: Redacted.Redacted<string> | undefined): Patch<Redacted.Redacted<string>> => {
  const patch = fromField(input === undefined ? undefined : Redacted.value(input))
  return patch._tag === "Set" ? { _tag: "Set", value: input! } : (patch as Patch<never>)
}

/**
 * Whether saving keeps the listing's checkout: the request sets the update window and nothing else. The window is
 * no term the checkout snapshots (no price, no payout address), so the links handed out stay good; the offer a
 * buyer is shown reads the window from the listing. A request naming any other term, a re-listing (`info`, a
 * fresh look at the repo), or a price or payout that comes out different (an account default filled a chain)
 * mints a new checkout as always.
 */
const keepsCheckout = (terms: Terms, info: RepoInfo | null, before: Listing, after: Listing): boolean =>
  !isKeep(terms.updatesDays) && info === null && isKeep(terms.price) && isKeep(terms.wallets.base) &&
  isKeep(terms.wallets.solana) && isKeep(terms.hostPat) && after.price === before.price &&
  after.payTo.base === before.payTo.base && after.payTo.solana === before.payTo.solana

/** Reading a request's terms, and applying them to a listing: prepared outside, saved inside one transaction. */
export const makeTerms = ({ accounts, box, chains, store, tx, withPorts }: ListingDeps) => {
  const readTerms = (errors: FieldErrors, input: UpdateListingInput) =>
    Effect.map(walletPatches(errors, input, chains.normalize), (wallets): Terms => ({
      price: pricePatch(errors, input.price_usd),
      wallets,
      hostPat: patPatch(input.host_pat),
      updatesDays: updatesDaysPatch(errors, input.updates_days)
    }))

  /**
   * The slow part of applying terms, done before any transaction: mints the new checkout id and seals a
   * new token (only a private repo keeps one). `hostPat` is None when the stored token is kept.
   */
  const prepareTerms = Effect.fnUntraced(function*(base: Listing, terms: Terms, info: RepoInfo | null) {
    const checkoutId = yield* withPorts(newId<CheckoutId>(IdPrefix.checkout))
    let hostPat = Option.none<SealedSecret | null>()
    if (terms.hostPat._tag === "Clear") hostPat = Option.some(null)
    if (terms.hostPat._tag === "Set") {
      hostPat = Option.some((info?.isPrivate ?? base.isPrivate) ? yield* box.seal(terms.hostPat.value, hostPatAad(base)) : null)
    }
    return { checkoutId, hostPat }
  })

  /**
   * Applies terms to a listing (new or existing): the price, the payout addresses resolved per chain and
   * the prepared token, with the prepared checkout. Pure, so it can re-apply the request to a row just
   * re-read under lock.
   */
  const buildTerms = (
    base: Listing,
    prepared: { readonly checkoutId: CheckoutId; readonly hostPat: Option.Option<SealedSecret | null> },
    terms: Terms,
    account: Account | null,
    info: RepoInfo | null,
    at: Date
  ) => {
    const listing = new Listing({
      ...base,
      ...(info === null ? {} : { repo: info.ref, hostUrl: info.htmlUrl, isPrivate: info.isPrivate, description: info.description, language: info.language }),
      price: apply(terms.price, base.price),
      payTo: resolvePayTo(base.payTo, terms.wallets, account?.wallets ?? null),
      hostPat: Option.getOrElse(prepared.hostPat, () => base.hostPat),
      checkoutId: prepared.checkoutId,
      updatedAt: at,
      updatesDays: apply(terms.updatesDays, base.updatesDays) ?? 0
    })
    return { listing, checkout: buildCheckout(listing, prepared.checkoutId, at) }
  }

  /**
   * The account's default wallets as committed now. Called inside the transaction that saves a listing
   * (after its row is locked or before it is inserted), so a wallet change committed meanwhile is not lost:
   * `Accounts` fills listings lacking a chain under the same row locks. A plain read, not a lock: the
   * account patch locks the account before the listings, and taking them in the other order could deadlock.
   */
  const currentAccount = (account: Account | null) =>
    account === null ? Effect.succeed(null) : Effect.map(accounts.findById(account.id), Option.getOrNull)

  /**
   * Saves changed terms on an existing listing. Inside one transaction the row is locked and re-read, the
   * account's defaults are read, and the request's patches are applied to them, so a concurrent edit of
   * other fields or of the account's wallets is kept; the checkout current at that moment is voided so
   * stale links stop selling (unless only the update window changed: `keepsCheckout`). None when the listing
   * is no longer live.
   */
  const saveTerms = (current: Listing, terms: Terms, account: Account | null, info: RepoInfo | null, at: Date) =>
    Effect.flatMap(prepareTerms(current, terms, info), (prepared) =>
      tx.withTransaction(Effect.gen(function*() {
        const fresh = Option.filter(yield* store.findByIdForUpdate(current.id), (l) => l.isLive)
        if (Option.isNone(fresh)) return Option.none<Listing>()
        const { checkout, listing } = buildTerms(fresh.value, prepared, terms, yield* currentAccount(account), info, at)
        if (keepsCheckout(terms, info, fresh.value, listing)) {
          const kept = new Listing({ ...listing, checkoutId: fresh.value.checkoutId })
          yield* store.update(kept)
          return Option.some(kept)
        }
        yield* store.update(listing)
        yield* store.voidCheckout(fresh.value.checkoutId, at)
        yield* store.insertCheckout(checkout)
        return Option.some(listing)
      })))

  return { readTerms, prepareTerms, buildTerms, currentAccount, saveTerms } as const
}

import { Effect, Either, Option, Redacted } from "effect"
import type { Account } from "../model/Account.js"
import { buildCheckout } from "../model/Checkout.js"
import type { Principal } from "../model/Credentials.js"
import { AlreadyListed, Forbidden, NotFound, RateLimited } from "../model/Errors.js"
import { type CheckoutId, IdPrefix, type ListingId, type SealedSecret } from "../model/Ids.js"
import { hostPatAad, Listing } from "../model/Listing.js"
import { HostTokens } from "./HostTokens.js"
import { noWallets } from "../model/Wallet.js"
import { FieldErrors, pricePatch, walletPatches } from "../model/rules/Fields.js"
import { parseHostUrl } from "../model/rules/HostUrl.js"
import { accessTo } from "../model/rules/Ownership.js"
import { resolvePayTo, type WalletPatches } from "../model/rules/PayoutResolution.js"
import { takeDown } from "../model/rules/Takedown.js"
import { apply, fromField, type Patch } from "../model/rules/ThreeState.js"
import { newId, now } from "../model/rules/Tokens.js"
import { AccountStore } from "../ports/AccountStore.js"
import { Chains } from "../ports/Chains.js"
import { CodeHost, type RepoInfo } from "../ports/CodeHost.js"
import { CodeHostIdentity } from "../ports/CodeHostIdentity.js"
import { ListingCatalog } from "../ports/ListingCatalog.js"
import { ListingStore } from "../ports/ListingStore.js"
import { RateLimiter } from "../ports/RateLimiter.js"
import { SecretBox } from "../ports/SecretBox.js"
import { Transactor } from "../ports/Transactor.js"
import { readFacts } from "./Catalog.js"
import { controlsThroughConnection } from "./HostConnection.js"
import { fromCodeHost } from "./HostErrors.js"
import type { AtomicAmount } from "../model/Money.js"

/** `POST /repos` as the contract names its fields. */
export interface CreateListingInput {
  /** `https://github.com/<owner>/<repo>`. */
  readonly host_url: string
  /** The Base payout address. */
  readonly wallet_base?: string | undefined
  /** The Solana payout address. */
  readonly wallet_solana?: string | undefined
  /** The price in US dollars, like `12.00`; without one the listing does not sell yet. */
  readonly price_usd?: string | undefined
  /** A read-only code-host token, needed for a private repo; stored sealed. */
  readonly host_pat?: Redacted.Redacted<string> | undefined
}

/** `PATCH /repos/<owner>/<repo>`: every field three-state. */
export interface UpdateListingInput {
  /** The Base payout address. */
  readonly wallet_base?: string | undefined
  /** The Solana payout address. */
  readonly wallet_solana?: string | undefined
  /** The price in US dollars, like `12.00`. */
  readonly price_usd?: string | undefined
  /** The read-only code-host token; stored sealed. */
  readonly host_pat?: Redacted.Redacted<string> | undefined
}

/** Anonymous listing limit decided in DECISIONS.md. */
export const ANONYMOUS_LISTINGS_PER_HOUR = 30

interface Terms {
  readonly price: Patch<AtomicAmount>
  readonly wallets: WalletPatches
  readonly hostPat: Patch<Redacted.Redacted<string>>
}

const patPatch = (input: Redacted.Redacted<string> | undefined): Patch<Redacted.Redacted<string>> => {
  const patch = fromField(input === undefined ? undefined : Redacted.value(input))
  return patch._tag === "Set" ? { _tag: "Set", value: input! } : (patch as Patch<never>)
}

/**
 * Listing repos for sale: create (anonymously or signed in), update terms, take down, the seller's inventory, and
 * opening a listing's sealed code-host token. A change of terms voids the checkout and mints a new one.
 */
export class Listings extends Effect.Service<Listings>()("repomarket/Listings", {
  dependencies: [HostTokens.Default],
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const accounts = yield* AccountStore
    const host = yield* CodeHost
    const box = yield* SecretBox
    const chains = yield* Chains
    const limiter = yield* RateLimiter
    const tx = yield* Transactor
    const identity = yield* CodeHostIdentity
    const catalog = yield* ListingCatalog
    /** The catalog's facts (topics, stars, README text), read with the same token as the repo. */
    const factsOf = (info: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) =>
      readFacts(info, token).pipe(Effect.provideService(CodeHost, host))
    const withPorts = <A, E>(effect: Effect.Effect<A, E, SecretBox>) => effect.pipe(Effect.provideService(SecretBox, box))

    const readTerms = (errors: FieldErrors, input: UpdateListingInput) =>
      Effect.map(walletPatches(errors, input, chains.normalize), (wallets): Terms => ({
        price: pricePatch(errors, input.price_usd),
        wallets,
        hostPat: patPatch(input.host_pat)
      }))

    const accountOf = (principal: Principal | null) =>
      principal === null ? Effect.succeed(null) : Effect.map(accounts.findById(principal.accountId), Option.getOrNull)

    /** Asks the code host with the token that will be stored, so a token is stored only after it worked. */
    const lookUp = (ref: { owner: string; name: string }, token: Option.Option<Redacted.Redacted<string>>) =>
      Effect.mapError(host.repo(ref, token), fromCodeHost)

    const { tokenOf } = yield* HostTokens

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
        updatedAt: at
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
     * stale links stop selling. None when the listing is no longer live.
     */
    const saveTerms = (current: Listing, terms: Terms, account: Account | null, info: RepoInfo | null, at: Date) =>
      Effect.flatMap(prepareTerms(current, terms, info), (prepared) =>
        tx.withTransaction(Effect.gen(function*() {
          const fresh = Option.filter(yield* store.findByIdForUpdate(current.id), (l) => l.isLive)
          if (Option.isNone(fresh)) return Option.none<Listing>()
          const { checkout, listing } = buildTerms(fresh.value, prepared, terms, yield* currentAccount(account), info, at)
          yield* store.update(listing)
          yield* store.voidCheckout(fresh.value.checkoutId, at)
          yield* store.insertCheckout(checkout)
          return Option.some(listing)
        })))

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

import { Effect, Either, Option, Redacted } from "effect"
import { Account, webhookSecretAad } from "../Account.js"
import { buildCheckout } from "../Checkout.js"
import type { Principal } from "../Credentials.js"
import { InvalidInput, Unauthenticated } from "../Errors.js"
import { type CheckoutId, IdPrefix } from "../Ids.js"
import { Listing } from "../Listing.js"
import { type Chain, CHAINS } from "../Wallet.js"
import { FieldErrors, walletPatches } from "../rules/Fields.js"
import { SkippedListing, skipReason } from "../rules/ListingsSkipped.js"
import { fillChain, lacksChain } from "../rules/PayoutResolution.js"
import { validateTagline } from "../rules/Tagline.js"
import { apply, fromField, type Patch, traverse } from "../rules/ThreeState.js"
import { now } from "../rules/Clock.js"
import { newId, newSecret } from "./Minting.js"
import { validateWebhookUrl } from "../rules/WebhookUrl.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Chains } from "../../ports/Chains.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Outbox } from "../../ports/Outbox.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { Transactor } from "../../ports/Transactor.js"
import { WebhookSender } from "../../ports/WebhookSender.js"
import { isOutage } from "./HostErrors.js"
import { Listings } from "./Listings.js"

/** `PATCH /my/account` as the contract names its fields; each three-state. */
export interface AccountPatchInput {
  /** The one-line storefront tagline shown on the owner page. */
  readonly storefront_tagline?: string | undefined
  /** Where `sale.settled` events are sent; setting it mints a new signing secret. */
  readonly webhook_url?: string | undefined
  /** The account's default Base payout address. */
  readonly wallet_base?: string | undefined
  /** The account's default Solana payout address. */
  readonly wallet_solana?: string | undefined
}

/** What `Accounts.patch` answers. */
export interface AccountPatchResult {
  /** The account as saved. */
  readonly account: Account
  /** Present when this request set `webhook_url`: the only time the secret is shown. */
  readonly webhookSecret: Redacted.Redacted<string> | null
  /** Present (non-empty) when a wallet addition could not rebuild some listings. */
  readonly listingsSkipped: ReadonlyArray<SkippedListing>
}

/** Code-host reachability checks run a few at a time so a large inventory does not burst the host. */
const HOST_CHECK_CONCURRENCY = 4

/**
 * The signed-in seller's account: `get` reads it, `patch` changes tagline, webhook and default wallets; a wallet
 * added for a chain fills that chain on the listings lacking it and rebuilds their checkouts.
 */
export class Accounts extends Effect.Service<Accounts>()("repomarket/Accounts", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const store = yield* ListingStore
    const outbox = yield* Outbox
    const host = yield* CodeHost
    const box = yield* SecretBox
    const chains = yield* Chains
    const sender = yield* WebhookSender
    const tx = yield* Transactor
    const listings = yield* Listings

    const get = (principal: Principal) =>
      Effect.flatten(accounts.findById(principal.accountId)).pipe(
        Effect.mapError(() => new Unauthenticated({ detail: "The account behind this credential no longer exists." }))
      )

    /** Whether the code host still serves a listing (token not revoked, repo not gone). */
    const reachable = (listing: Listing) =>
      listings.tokenOf(listing).pipe(
        Effect.flatMap((token) => host.repo(listing.repo, token)),
        Effect.as(true),
        // An outage says nothing about the token or the repo: rebuild rather than report a false reason.
        Effect.catchTag("CodeHostError", (e) => Effect.succeed(isOutage(e)))
      )

    /**
     * A wallet saved for a chain fills that chain on the account's listings that lack it and rebuilds
     * their checkouts; listings that carry an address keep it. Listings that cannot take it are reported.
     */
    const planWalletAddition = Effect.fnUntraced(function*(account: Account, added: ReadonlyArray<Chain>) {
      const all = yield* store.listByAccount(account.id, { includeTakenDown: true })
      const liveRepos = new Set(all.filter((l) => l.isLive).map((l) => l.repo.key))
      // A repo's old taken-down listings are history once it is listed again; report each repo once.
      const seen = new Set<string>()
      const candidates = all.filter((l) => {
        if (!added.some((chain) => lacksChain(l, chain))) return false
        if (!l.isLive && (liveRepos.has(l.repo.key) || seen.has(l.repo.key))) return false
        seen.add(l.repo.key)
        return true
      })
      const checked = yield* Effect.forEach(
        candidates,
        (listing) => Effect.map(listing.isLive && listing.price !== null ? reachable(listing) : Effect.succeed(true), (ok) => ({ listing, reason: skipReason(listing, ok) })),
        { concurrency: HOST_CHECK_CONCURRENCY }
      )
      return {
        rebuild: checked.filter((c) => c.reason === null).map((c) => c.listing),
        skipped: checked.flatMap((c) => c.reason === null ? [] : [new SkippedListing({ repo: c.listing.repo.slug, reason: c.reason })])
      }
    })

    const patch = Effect.fn("Accounts.patch")(function*(principal: Principal, input: AccountPatchInput) {
      const errors = new FieldErrors()
      const tagline = traverse(fromField(input.storefront_tagline), (t) =>
        Either.match(validateTagline(t), {
          onLeft: (m) => Effect.fail(InvalidInput.forField("storefront_tagline", m)),
          onRight: Effect.succeed
        }))
      const taglinePatch = yield* tagline.pipe(Effect.catchAll((e) => {
        errors.problems.push(...e.errors)
        return Effect.succeed(fromField(undefined))
      }))
      const webhookPatch: Patch<string> = yield* traverse(fromField(input.webhook_url), (url) =>
        Either.match(validateWebhookUrl(url), {
          onLeft: (m) => Effect.fail(m),
          onRight: (normalized) =>
            sender.checkTarget(normalized).pipe(Effect.as(normalized), Effect.mapError((e) => e.message))
        })).pipe(Effect.catchAll((m) => {
          errors.add("webhook_url", m)
          return Effect.succeed(fromField(undefined))
        }))
      const wallets = yield* walletPatches(errors, input, chains.normalize)
      yield* errors.check

      // Slow work first, outside the transaction: sealing, the code-host checks, minting checkout ids.
      const current = yield* get(principal)
      const webhookSecret = webhookPatch._tag === "Set" ? yield* newSecret("whsec_").pipe(Effect.provideService(SecretBox, box)) : null
      const sealedSecret = webhookSecret === null ? null : yield* box.seal(webhookSecret, webhookSecretAad(current))
      const added = CHAINS.filter((c) => wallets[c]._tag === "Set")
      const plan = added.length > 0 ? yield* planWalletAddition(current, added) : { rebuild: [], skipped: [] }
      const at = yield* now
      const checkoutIds = yield* Effect.forEach(plan.rebuild, () =>
        newId<CheckoutId>(IdPrefix.checkout).pipe(Effect.provideService(SecretBox, box)))

      // Then, under lock, the request's patches are applied to the rows as they are now, so a concurrent
      // change to other fields is kept.
      const { next, skipped } = yield* tx.withTransaction(Effect.gen(function*() {
        const fresh = yield* Effect.flatten(accounts.findByIdForUpdate(current.id)).pipe(
          Effect.mapError(() => new Unauthenticated({ detail: "The account behind this credential no longer exists." }))
        )
        const next = new Account({
          ...fresh,
          storefrontTagline: apply(taglinePatch, fresh.storefrontTagline),
          webhookUrl: apply(webhookPatch, fresh.webhookUrl),
          webhookSecret: sealedSecret ?? (webhookPatch._tag === "Clear" ? null : fresh.webhookSecret),
          wallets: { base: apply(wallets.base, fresh.wallets.base), solana: apply(wallets.solana, fresh.wallets.solana) }
        })
        yield* accounts.update(next)
        if (webhookPatch._tag === "Clear") yield* outbox.cancelPending(next.id)
        const skipped: Array<SkippedListing> = []
        for (const [i, planned] of plan.rebuild.entries()) {
          // The listing may have changed since it was planned: fill only a chain it still lacks.
          const listing = Option.getOrNull(yield* store.findByIdForUpdate(planned.id))
          if (listing === null || !listing.isLive) {
            skipped.push(new SkippedListing({ repo: planned.repo.slug, reason: "taken_down" }))
            continue
          }
          if (!added.some((chain) => lacksChain(listing, chain))) continue
          let payTo = listing.payTo
          for (const chain of added) payTo = fillChain(payTo, chain, next.wallets[chain]!)
          const checkoutId = checkoutIds[i]!
          const updated = new Listing({ ...listing, payTo, checkoutId, updatedAt: at })
          yield* store.update(updated)
          yield* store.voidCheckout(listing.checkoutId, at)
          yield* store.insertCheckout(buildCheckout(updated, checkoutId, at))
        }
        return { next, skipped }
      }))
      return { account: next, webhookSecret, listingsSkipped: [...plan.skipped, ...skipped] } satisfies AccountPatchResult
    })

    return { get, patch } as const
  })
}) {}

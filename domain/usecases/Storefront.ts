import { Effect, Option } from "effect"
import type { Account } from "../Account.js"
import { type HostUnavailable, NotFound } from "../Errors.js"
import type { Listing } from "../Listing.js"
import { categorize, type Category } from "../rules/Category.js"
import { isPlausibleOwner, isPlausibleRepoName } from "../rules/HostUrl.js"
import { isSelling } from "../rules/Selling.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { type ArchiveDigest, CodeHost, type OwnerRepo, type Readme, type RepoInfo, type RepoTree } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { ArchiveCuts } from "./ArchiveCuts.js"
import { isOutage, outage } from "./HostErrors.js"
import { Listings } from "./Listings.js"

/** One of the owner's public repos from the code host, with its category. */
export interface IndexedRepo extends OwnerRepo {
  /** The category `categorize` gives it. */
  readonly category: Category
}

/** The public page of a code-host owner (`/r/<owner>`). */
export interface OwnerPage {
  /** The owner's login, in the code host's canonical case when known. */
  readonly owner: string
  /** The owner's page on the code host. */
  readonly hostUrl: string
  /**
   * Whether the owner is tied to an account (by its code-host connection, or as the only account listing its
   * repos).
   */
  readonly claimed: boolean
  /** Shown only when claimed. */
  readonly tagline: string | null
  /** The owner's live listings. */
  readonly inventory: ReadonlyArray<Listing>
  /** The owner's public repos from the code host that are not listed; empty when the host could not be asked. */
  readonly indexed: ReadonlyArray<IndexedRepo>
  /**
   * Null when `indexed` is the code host's answer; otherwise why it is missing: the code host could not be
   * asked right now, or the server kept its remaining quota for previews and purchases (`INDEX_SKIPPED`).
   */
  readonly indexedNote: string | null
}

/** What an owner page says when its index was not asked for, to keep the code-host quota's reserve. */
export const INDEX_SKIPPED =
  "The list of this owner's other public repositories is left out for now: the server keeps the rest of its hourly code-host quota for previews and purchases. It comes back once the quota resets."

/** What an owner page with listings says when the code host could not give its index. */
export const INDEX_UNAVAILABLE = "The list of this owner's other public repositories could not be read from the code host right now."

/** The public page of a listed repo (`/r/<owner>/<repo>`). */
export interface RepoPage {
  /** The live listing. */
  readonly listing: Listing
  /** Null when the code host could not be asked right now; the listing's own facts still show. */
  readonly preview: {
    readonly info: RepoInfo
    readonly tree: RepoTree
    readonly readme: Option.Option<Readme>
    /** The archive of the head commit (what a purchase now delivers), once cut (viewing the page of a listing for sale starts that); else null. */
    readonly archive: ArchiveDigest | null
  } | null
}

/** The public pages: an owner's page and a listed repo's page, with a preview read from the code host. */
export class Storefront extends Effect.Service<Storefront>()("repomarket/Storefront", {
  dependencies: [ArchiveCuts.Default],
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const accounts = yield* AccountStore
    const host = yield* CodeHost
    const listings = yield* Listings
    const cuts = yield* ArchiveCuts

    /**
     * The owner ties to an account when an account's code-host connection is the owner, or when exactly
     * one account holds listings under the owner. Only then is its tagline shown.
     */
    const claimant = Effect.fnUntraced(function*(owner: string, inventory: ReadonlyArray<Listing>) {
      const connected = yield* accounts.findByHostLogin(owner)
      if (connected.length > 0) return connected[0]!
      const holders = new Set(inventory.flatMap((l) => (l.accountId === null ? [] : [l.accountId])))
      if (holders.size !== 1) return null
      return Option.getOrNull(yield* accounts.findById([...holders][0]!))
    })

    const ownerPage = Effect.fn("Storefront.ownerPage")(function*(owner: string) {
      const missing = new NotFound({ detail: `No owner page for ${owner}.` })
      if (!isPlausibleOwner(owner)) return yield* missing
      const inventory = yield* store.listLiveByOwner(owner)
      type Index = { readonly repos: Option.Option<ReadonlyArray<OwnerRepo>>; readonly note: string | null }
      const { note, repos } = yield* host.ownerRepos(owner).pipe(
        Effect.map((found): Index => ({ repos: Option.some(found), note: null })),
        Effect.catchTag("CodeHostError", (e): Effect.Effect<Index, NotFound | HostUnavailable> =>
          // Kept from the quota (an anonymous lookup): the page without its index, saying so, for any owner.
          e.reason === "quota_reserved" ? Effect.succeed({ repos: Option.none(), note: INDEX_SKIPPED })
          // With listings to show, a code-host hiccup costs only the free index, not the page.
          : inventory.length > 0 ? Effect.succeed({ repos: Option.none(), note: isOutage(e) ? INDEX_UNAVAILABLE : null })
          : isOutage(e) ? Effect.fail(outage(e))
          : Effect.fail(missing))
      )
      const listed = new Set(inventory.map((l) => l.repo.key))
      const indexed = Option.getOrElse(repos, () => []).filter((r) => !listed.has(r.ref.key))
        .map((r): IndexedRepo => ({ ...r, category: categorize(r) }))
      const canonical = inventory[0]?.repo.owner ?? Option.getOrUndefined(repos)?.[0]?.ref.owner ?? owner
      const account: Account | null = yield* claimant(canonical, inventory)
      return {
        owner: canonical,
        hostUrl: host.ownerUrl(canonical),
        claimed: account !== null,
        tagline: account?.storefrontTagline ?? null,
        inventory,
        indexed,
        indexedNote: note
      } satisfies OwnerPage
    })

    /** `client` (the caller's address, when the door passes it) counts an archive cut among that client's (see ArchiveCuts). */
    const repoPage = Effect.fn("Storefront.repoPage")(function*(owner: string, name: string, client?: string) {
      const missing = new NotFound({ detail: `${owner}/${name} is not listed.` })
      if (!isPlausibleOwner(owner) || !isPlausibleRepoName(name)) return yield* missing
      // Only "no such listing" is a 404: a storage failure flows on (the app answers it 503 database_unavailable).
      const listing = yield* Effect.flatMap(store.findLive(owner, name), Option.match({ onNone: () => Effect.fail(missing), onSome: Effect.succeed }))
      const token = yield* listings.tokenOf(listing)
      const preview = yield* Effect.gen(function*() {
        const info = yield* host.repo(listing.repo, token)
        const [tree, readme] = yield* Effect.all([host.tree(info, token), host.readme(info, token)], { concurrency: 2 })
        // A listing for sale has its commit's archive cut, as its first 402 does (waiting a moment for it), so
        // the page names what a purchase delivers; one not for sale names a digest only if already known.
        const archive = Option.getOrNull(
          yield* isSelling(listing)
            ? cuts.digestForOffer(listing.repo, info.headSha, token, { listing: listing.id, owner: listing.repo.owner, client })
            : host.archiveDigest(listing.repo, info.headSha)
        )
        return { info, tree, readme, archive }
      }).pipe(
        Effect.catchTag("CodeHostError", (e) =>
          // An outage is the host's problem to report; a refusal (token revoked, repo gone) still shows the listing.
          isOutage(e) ? Effect.fail(outage(e)) : Effect.succeed(null))
      )
      return { listing, preview } satisfies RepoPage
    })

    return { ownerPage, repoPage } as const
  })
}) {}

import { Option } from "effect"
import type { Account } from "../domain/Account.js"
import { checkoutPath, repoPagePath, testCheckoutPath } from "../domain/Checkout.js"
import type { Listing } from "../domain/Listing.js"
import { formatUsd } from "../domain/Money.js"
import { isSelling, sellingNote } from "../domain/rules/Selling.js"
import type { OwnerPage, RepoPage } from "../domain/usecases/Storefront.js"
import { chainsOf } from "../domain/Wallet.js"
import type * as S from "./Schemas.js"

/** Domain objects as the contract's JSON. Absolute URLs are built from `BASE_URL`; `page` is a path. */

const iso = (d: Date) => d.toISOString()
const priceOf = (l: Listing) => (l.price === null ? null : formatUsd(l.price))

export const createdListing = (l: Listing, baseUrl: string): typeof S.CreatedListing.Type => ({
  repo: l.repo.slug,
  page: repoPagePath(l.repo),
  checkout_url: baseUrl + checkoutPath(l.checkoutId),
  test_checkout_url: baseUrl + testCheckoutPath(l.checkoutId),
  selling: isSelling(l),
  note: sellingNote(l),
  updates_days: l.updatesDays
})

export const listingView = (l: Listing, baseUrl: string): typeof S.ListingView.Type => ({
  ...createdListing(l, baseUrl),
  host_url: l.hostUrl,
  private: l.isPrivate,
  price_usd: priceOf(l),
  chains: chainsOf(l.payTo),
  wallet_base: l.payTo.base,
  wallet_solana: l.payTo.solana,
  has_host_pat: l.hostPat !== null,
  created_at: iso(l.createdAt),
  updated_at: iso(l.updatedAt)
})

export const accountView = (a: Account): typeof S.AccountView.Type => ({
  email: a.email,
  storefront_tagline: a.storefrontTagline,
  webhook_url: a.webhookUrl,
  wallet_base: a.wallets.base,
  wallet_solana: a.wallets.solana,
  host_login: a.hostLogin
})

export const howToBuyOwner = (baseUrl: string, owner: string) =>
  `To buy a listed repo, fetch ${baseUrl}/r/${owner}/<repo> with "Accept: application/json": it returns the tree, ` +
  "the README, the price and checkout_url, which answers HTTP 402 with x402 payment requirements (USDC on Base " +
  "or Solana); pay it with any x402 client. test_checkout_url runs the same flow with simulated money, for " +
  "rehearsal. Indexed repos are free and not for sale: clone them from the code host."

export const howToBuyRepo = (l: Listing, baseUrl: string) =>
  `GET ${baseUrl}${checkoutPath(l.checkoutId)} with an x402 client (for example @x402/fetch's wrapFetchWithPayment): ` +
  "it answers 402 with the payment requirements, your client signs a USDC payment to the seller's wallet, and the " +
  "paid request returns the repository as a .tar.gz. Official clients refuse payments above $1 and unknown assets " +
  "unless their spend controls allow them: raise them for this price and USDC. Rehearse first with " +
  `${baseUrl}${testCheckoutPath(l.checkoutId)} (simulated money on the test networks).`

export const ownerPageView = (p: OwnerPage, baseUrl: string): typeof S.OwnerPage.Type => ({
  owner: p.owner,
  host: p.hostUrl,
  claimed: p.claimed,
  storefront_tagline: p.claimed ? p.tagline : null,
  inventory: p.inventory.map((l) => ({
    repo: l.repo.slug,
    page: repoPagePath(l.repo),
    price_usd: priceOf(l),
    selling: isSelling(l),
    description: l.description,
    language: l.language,
    chains: chainsOf(l.payTo)
  })),
  indexed: p.indexed.map((r) => ({
    repo: r.ref.slug,
    host: r.htmlUrl,
    description: r.description ?? "",
    language: r.language,
    stars: r.stars,
    topics: [...r.topics],
    // SPDX's word for "not stated": the contract's field is a string.
    license: r.license ?? "NOASSERTION",
    category: r.category
  })),
  indexed_available: p.indexedNote === null,
  indexed_note: p.indexedNote,
  how_to_buy: howToBuyOwner(baseUrl, p.owner)
})

export const repoPageView = ({ listing: l, preview }: RepoPage, baseUrl: string): typeof S.RepoPage.Type => ({
  ...createdListing(l, baseUrl),
  host_url: l.hostUrl,
  description: preview?.info.description ?? l.description,
  language: preview?.info.language ?? l.language,
  private: l.isPrivate,
  price_usd: priceOf(l),
  amount: l.price === null ? null : l.price.toString(),
  currency: "USDC",
  chains: chainsOf(l.payTo),
  preview_available: preview !== null,
  default_branch: preview?.info.defaultBranch ?? null,
  commit: preview?.info.headSha ?? null,
  archive: preview === null || preview.archive === null ? null : { ...preview.archive },
  stars: preview?.info.stars ?? null,
  topics: preview ? [...preview.info.topics] : [],
  license: preview?.info.license ?? null,
  tree: preview ? { entries: preview.tree.entries.map((e) => ({ ...e })), truncated: preview.tree.truncated } : null,
  readme: preview ? Option.getOrNull(Option.map(preview.readme, (r) => ({ ...r }))) : null,
  how_to_buy: howToBuyRepo(l, baseUrl)
})

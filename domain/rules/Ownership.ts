import type { Account } from "../Account.js"
import type { Listing } from "../Listing.js"

/**
 * Who may act on a live listing. The owning account may re-list or patch it. Another account may take it
 * over only by proving control of the repo through its code-host connection: its verified login is the
 * repo's owner (decided here), or the code host says that login administers the repo (an organisation's
 * repo: asked by the Listings use case with the login's own token). Anyone else, anonymous callers
 * included, is refused: nobody can prove an anonymous claim.
 */
export type ListingAccess = "owner" | "proven_control" | "none"

/** Whether the account's proven code-host login is the repo's owner (case-insensitive). */
export const provesControl = (account: Account | null, repoOwner: string): boolean =>
  account?.hostLogin != null && account.hostLogin.toLowerCase() === repoOwner.toLowerCase()

/** What the account may do with a listing: its owner's, proven control of the repo, or nothing. */
export const accessTo = (listing: Listing, account: Account | null): ListingAccess => {
  if (account !== null && listing.accountId === account.id) return "owner"
  if (provesControl(account, listing.repo.owner)) return "proven_control"
  return "none"
}

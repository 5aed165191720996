import { Listing } from "../Listing.js"

/**
 * A takedown ends the listing: it stops selling, its page and inventory entry disappear, and the stored
 * code-host token is destroyed (not just hidden). Sales history is kept elsewhere and untouched. The caller
 * voids the checkout in the same transaction.
 */
export const takeDown = (listing: Listing, now: Date): Listing =>
  new Listing({ ...listing, status: "taken_down", hostPat: null, takenDownAt: now, updatedAt: now })

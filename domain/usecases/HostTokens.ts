import { Effect, Option, type Redacted } from "effect"
import { hostPatAad, type Listing } from "../Listing.js"
import { SecretBox } from "../../ports/SecretBox.js"

/**
 * A private listing's code-host token, opened from its sealed form (bound to the listing, so a sealed token moved
 * to another listing does not open). Its own small service so a purchase needs the secret box, not all of Listings.
 */
export class HostTokens extends Effect.Service<HostTokens>()("repomarket/HostTokens", {
  effect: Effect.gen(function*() {
    const box = yield* SecretBox
    /** `None` for a public listing (no token stored). A token that no longer opens is a defect: keys were lost. */
    const tokenOf = (listing: Listing): Effect.Effect<Option.Option<Redacted.Redacted<string>>> =>
      listing.hostPat === null
        ? Effect.succeed(Option.none())
        : box.open(listing.hostPat, hostPatAad(listing)).pipe(Effect.map(Option.some), Effect.orDie)
    return { tokenOf } as const
  })
}) {}

import { Effect, Option, type Redacted } from "effect"
import type { Principal } from "../../Credentials.js"
import { AccountStore } from "../../../ports/AccountStore.js"
import { Chains } from "../../../ports/Chains.js"
import { CodeHost, type RepoInfo } from "../../../ports/CodeHost.js"
import { CodeHostIdentity } from "../../../ports/CodeHostIdentity.js"
import { ListingCatalog } from "../../../ports/ListingCatalog.js"
import { ListingStore } from "../../../ports/ListingStore.js"
import { RateLimiter } from "../../../ports/RateLimiter.js"
import { SecretBox } from "../../../ports/SecretBox.js"
import { Transactor } from "../../../ports/Transactor.js"
import { readFacts } from "../Catalog.js"
import { fromCodeHost } from "../HostErrors.js"
import { HostTokens } from "../HostTokens.js"

/** What the listing operations are written against: the ports and use cases, read once when Listings is built. */
export const listingDeps = Effect.gen(function*() {
  const accounts = yield* AccountStore
  const host = yield* CodeHost
  const box = yield* SecretBox
  return {
    store: yield* ListingStore,
    accounts,
    host,
    box,
    chains: yield* Chains,
    limiter: yield* RateLimiter,
    tx: yield* Transactor,
    identity: yield* CodeHostIdentity,
    catalog: yield* ListingCatalog,
    tokens: yield* HostTokens,
    /** The catalog's facts (topics, stars, README text), read with the same token as the repo. */
    factsOf: (info: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) =>
      readFacts(info, token).pipe(Effect.provideService(CodeHost, host)),
    withPorts: <A, E>(effect: Effect.Effect<A, E, SecretBox>) => effect.pipe(Effect.provideService(SecretBox, box)),
    accountOf: (principal: Principal | null) =>
      principal === null ? Effect.succeed(null) : Effect.map(accounts.findById(principal.accountId), Option.getOrNull),
    /** Asks the code host with the token that will be stored, so a token is stored only after it worked. */
    lookUp: (ref: { owner: string; name: string }, token: Option.Option<Redacted.Redacted<string>>) =>
      Effect.mapError(host.repo(ref, token), fromCodeHost)
  } as const
})

/** The listing operations' dependencies. */
export type ListingDeps = Effect.Effect.Success<typeof listingDeps>

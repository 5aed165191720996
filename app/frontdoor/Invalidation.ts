import { Context, Effect, Layer, Option } from "effect"
import { AccountStore } from "../../ports/AccountStore.js"
import { ChangeFeed } from "../../ports/ChangeFeed.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Transactor } from "../../ports/Transactor.js"
import { FrontDoor } from "./Service.js"

const isRead = (name: string) => name.startsWith("find") || name.startsWith("list")

/**
 * Every method of a store that is not a read (`find…`, `list…`) announces itself to the other hosts (inside
 * the write's transaction, so they hear it on commit) and forgets this host's remembered answers when it ends.
 */
const invalidatingWrites = <S extends object>(store: S, forget: () => void, announce: Effect.Effect<void>): S =>
  Object.fromEntries(
    Object.entries(store).map(([name, method]) =>
      typeof method !== "function" || isRead(name)
        ? [name, method]
        : [name, (...args: Array<unknown>) =>
          Effect.ensuring(Effect.tap(method(...args) as Effect.Effect<unknown, unknown, unknown>, () => announce), Effect.sync(forget))]
    )
  ) as S

/**
 * The listing and account stores and the transactor as the use cases see them: where a front door exists,
 * every write forgets its remembered answers — when the write ends and again when its transaction ends, so
 * an answer read between the two (the write not yet committed) is not kept either. Where hosts share a
 * database (ChangeFeed), every write is also announced to the others, whose followers forget theirs.
 */
export const InvalidatingStorage = Layer.effectContext(
  Effect.gen(function*() {
    const listings = yield* ListingStore
    const accounts = yield* AccountStore
    const tx = yield* Transactor
    const door = yield* Effect.serviceOption(FrontDoor)
    const feed = yield* Effect.serviceOption(ChangeFeed)
    if (Option.isNone(door) && Option.isNone(feed)) {
      return Context.make(ListingStore, listings).pipe(Context.add(AccountStore, accounts), Context.add(Transactor, tx))
    }
    const forget = Option.match(door, { onNone: () => () => undefined, onSome: (d) => d.invalidate })
    const announce = Option.match(feed, { onNone: () => Effect.void, onSome: (f) => f.publish })
    return Context.make(ListingStore, invalidatingWrites(listings, forget, announce)).pipe(
      Context.add(AccountStore, invalidatingWrites(accounts, forget, announce)),
      Context.add(Transactor, { withTransaction: (effect) => Effect.ensuring(tx.withTransaction(effect), Effect.sync(forget)) })
    )
  })
)

/**
 * The front door forgets what it remembered whenever another host announces a write, and whenever
 * announcements may have been missed (see ChangeFeed). `RESPONSE_CACHE_MS` stays the backstop.
 */
export const FrontDoorFollowsOtherHosts = Layer.scopedDiscard(
  Effect.gen(function*() {
    const door = yield* FrontDoor
    const feed = yield* ChangeFeed
    yield* Effect.forkScoped(feed.follow(() => door.invalidate()))
  })
)

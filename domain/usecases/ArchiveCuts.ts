import { Clock, Deferred, Duration, Effect, Either, type Exit, FiberId, Option, type Redacted } from "effect"
import { commitKey, type RepoRef } from "../Ids.js"
import type { ArchiveDigest } from "../ReceiptClaims.js"
import { CodeHost, CodeHostError, type CutPurpose } from "../../ports/CodeHost.js"

/**
 * How long a 402 waits for the first cut of its commit's archive, so that the offer names the digest: a small
 * archive is cut in far less; a larger one goes on being cut after the 402 has answered, and later offers name it.
 */
export const OFFER_CUT_WAIT = Duration.seconds(1)

/**
 * Cuts started by offers (unpaid requests) that may run at once; an offer for yet another commit meanwhile
 * answers without a digest rather than start a download. A paid delivery always cuts.
 */
export const MAX_OFFER_CUTS = 4

/** After a failed cut, offers of that commit do not try again for this long (or as long as the code host asked). */
export const OFFER_CUT_RETRY = Duration.minutes(1)

/**
 * After a failed cut, deliveries of that commit do not try again for this long (or as long as the code host
 * asked): each answers that failure at once, its Retry-After the time left, so buyers and receipt links asking
 * over and over cost the code host one call per commit in this time, not one each.
 */
export const DELIVERY_CUT_RETRY = Duration.seconds(30)

/** The window of the offers' cut counts below. */
export const OFFER_CUT_WINDOW = Duration.hours(1)

/**
 * Offers' cuts started per window for one listing, for one owner (every listing of one account or organisation on
 * the code host), and for one client (address): past any of them an offer names no digest, as for a commit whose
 * cut is running elsewhere, and downloads nothing. A commit's head moves a few times a day; these are bounds on
 * someone pushing, listing or viewing to make the server download for nothing, never on a purchase.
 */
export const OFFER_CUTS_PER_LISTING = 6
export const OFFER_CUTS_PER_OWNER = 24
export const OFFER_CUTS_PER_CLIENT = 24

/** Commits (and listings, owners, clients counted) remembered; the oldest dropped first. */
const MAX_REMEMBERED = 10_000

/** Who an offer's cut would be for: the listing offered, its owner on the code host, and the client asking when the door knows it. */
export interface OfferCaller {
  readonly listing: string
  readonly owner: string
  readonly client?: string | undefined
}

type Cut = Deferred.Deferred<Option.Option<ArchiveDigest>, CodeHostError>

/** A cut running, and who started it. */
interface Running {
  readonly cut: Cut
  readonly purpose: CutPurpose
}

/**
 * What the last cut of a commit taught: until when offers leave it alone (forever: too large for an offer to
 * cut; a while: its cut failed), until when deliveries do (forever: not kept by the adapter at all; a while: its
 * cut failed, and `failure` is what they answer meanwhile).
 */
interface Remembered {
  readonly offers: number
  readonly deliveries: number
  readonly failure: CodeHostError | null
}

/** A map that holds at most `MAX_REMEMBERED` keys, the one set longest ago dropped first. */
const bounded = <V>() => {
  const map = new Map<string, V>()
  return {
    get: (key: string) => map.get(key),
    set: (key: string, value: V) => {
      map.delete(key)
      if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!)
      map.set(key, value)
    },
    delete: (key: string) => void map.delete(key)
  }
}

const untilAfter = (now: number, wait: Duration.Duration, e: CodeHostError) =>
  now + Math.max(Duration.toMillis(wait), (e.retryAfterSeconds ?? 0) * 1000)

/**
 * The digest of a commit's archive, the archive cut first when none was (`CodeHost.cut`: read whole and kept, so
 * the next `archive` of that commit is those bytes, checked against that digest). That is how a live delivery
 * carries its `Repr-Digest` and a receipt naming its bytes, the first delivery of a commit too, and how an offer
 * names the digest before anybody bought that commit (the repo page too).
 *
 * - One cut per commit runs at a time (the repository lower case, as the code host's names are
 *   case-insensitive): a second buyer, or an offer, waits for the one running. Cuts run detached from the
 *   request that started them, so a buyer who hangs up wastes nothing the next buyer needs.
 * - A cut says who it is for (`CutPurpose`): an offer's is kept apart from purchased archives by the adapter and
 *   may be declined (too large for an offer); a delivery that joins an offer's cut which kept nothing cuts again
 *   for itself.
 * - An archive the adapter cannot keep (larger than it keeps) is remembered as such: its deliveries stream
 *   straight from the code host as before, without a digest ahead of their bytes, and its offers name none.
 * - A failed cut is not tried again per request: offers wait `OFFER_CUT_RETRY`, deliveries `DELIVERY_CUT_RETRY`.
 */
const makeArchiveCuts = (host: CodeHost["Type"]) => {
  const running = new Map<string, Running>()
  const remembered = bounded<Remembered>()
  /** Offers' cuts started in the current window, per listing (`l`), owner (`o`) and client (`c`). */
  const counted = bounded<{ readonly start: number; readonly count: number }>()
  let offerCuts = 0

  /** The cut of a commit, remembering how it ended. */
  const cutting = (key: string, ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>, purpose: CutPurpose) =>
    host.cut(ref, commitSha, token, purpose).pipe(
      Effect.tap((digest) =>
        Effect.sync(() => {
          if (Option.isSome(digest)) return remembered.delete(key)
          // Not kept for an offer: offers leave it alone until a sale cuts it; deliveries still cut it.
          remembered.set(key, { offers: Infinity, deliveries: purpose === "paid" ? Infinity : 0, failure: null })
        })
      ),
      Effect.tapError((e) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() =>
            remembered.set(key, {
              offers: untilAfter(now, OFFER_CUT_RETRY, e),
              // Kept from the quota (a spare call refused): a verdict on offers, not on deliveries.
              deliveries: e.reason === "quota_reserved" ? 0 : untilAfter(now, DELIVERY_CUT_RETRY, e),
              failure: e
            })
          ))
      )
    )

  /**
   * The cut of this commit that is running, or a new one for `purpose` (counted among the offers' cuts while it
   * runs when an offer's). A new cut is in `running` before it starts and leaves it as it ends, so every caller
   * in between waits for that one.
   */
  const cutOf = (key: string, ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>, purpose: CutPurpose) =>
    Effect.suspend((): Effect.Effect<Running> => {
      const before = running.get(key)
      if (before !== undefined) return Effect.succeed(before)
      const started: Running = { cut: Deferred.unsafeMake(FiberId.none), purpose }
      running.set(key, started)
      const forOffer = purpose === "offer"
      if (forOffer) offerCuts++
      const ended = (exit: Exit.Exit<Option.Option<ArchiveDigest>, CodeHostError>) =>
        Effect.suspend(() => {
          running.delete(key)
          if (forOffer) offerCuts--
          return Deferred.done(started.cut, exit)
        })
      return Effect.as(Effect.forkDaemon(Effect.onExit(cutting(key, ref, commitSha, token, purpose), ended)), started)
    })

  /** A delivery's cut: the one running (an offer's that kept nothing is followed by the delivery's own), or its own. */
  const deliveryCut = (key: string, ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>) => {
    const cut = Effect.flatMap(cutOf(key, ref, commitSha, token, "paid"), (r) => Effect.map(Effect.either(Deferred.await(r.cut)), (answer) => ({ answer, purpose: r.purpose })))
    return Effect.flatMap(cut, ({ answer, purpose }) => {
      // An offer's cut that kept nothing for it (too large for an offer, or kept from the quota) is not a verdict
      // on the delivery, which cuts for itself.
      const offerKeptNothing = purpose === "offer" &&
        Either.match(answer, { onLeft: (e) => e.reason === "quota_reserved", onRight: Option.isNone })
      return offerKeptNothing ? Effect.flatMap(cutOf(key, ref, commitSha, token, "paid"), (own) => Deferred.await(own.cut)) : answer
    })
  }

  /**
   * For a delivery: the commit's digest, known or cut now (the first buyer's first byte then waits for the
   * archive, once per commit). None when the adapter does not keep that archive, or kept its quota from the cut
   * (`quota_reserved`: a cut is ahead of a sale, a delivery is not): the delivery streams it straight from the
   * code host. The code host's failure when the cut failed otherwise, and for `DELIVERY_CUT_RETRY` after it
   * without asking again (its `retryAfterSeconds` then the time left).
   */
  const digestFor = (ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>) =>
    Effect.flatMap(host.archiveDigest(ref, commitSha), (known) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = commitKey(ref, commitSha)
        const memory = remembered.get(key)
        if (Option.isSome(known) || memory?.deliveries === Infinity) return Effect.succeed(known)
        if (memory !== undefined && memory.failure !== null && memory.deliveries > now) {
          const { message, reason } = memory.failure
          return Effect.fail(new CodeHostError({ reason, message, retryAfterSeconds: Math.ceil((memory.deliveries - now) / 1000) }))
        }
        return deliveryCut(key, ref, commitSha, token).pipe(
          Effect.catchIf((e) => e.reason === "quota_reserved", () => Effect.succeed(Option.none<ArchiveDigest>()))
        )
      }))

  /** Whether `key`'s count in this window is below `limit`. */
  const below = (key: string, limit: number, now: number) => {
    const entry = counted.get(key)
    return entry === undefined || now - entry.start >= Duration.toMillis(OFFER_CUT_WINDOW) || entry.count < limit
  }
  const count = (key: string, now: number) => {
    const entry = counted.get(key)
    counted.set(key, entry === undefined || now - entry.start >= Duration.toMillis(OFFER_CUT_WINDOW) ? { start: now, count: 1 } : { start: entry.start, count: entry.count + 1 })
  }

  /**
   * For an offer: the commit's digest if known, else a cut started (or joined) and waited for at most
   * `OFFER_CUT_WAIT`. None when it takes longer, when the adapter does not keep that archive for an offer, when
   * its cut failed (lately: see `OFFER_CUT_RETRY`), when `MAX_OFFER_CUTS` offers' cuts are running already, or
   * when the caller's listing, owner or client started their share of cuts this window (`OFFER_CUTS_PER_*`); the
   * offer then names the commit only.
   */
  const digestForOffer = (ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>, caller: OfferCaller) =>
    Effect.flatMap(host.archiveDigest(ref, commitSha), (known) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = commitKey(ref, commitSha)
        if (Option.isSome(known) || (remembered.get(key)?.offers ?? 0) > now) return Effect.succeed(known)
        if (!running.has(key)) {
          const counts: Array<readonly [string, number]> = [[`l ${caller.listing}`, OFFER_CUTS_PER_LISTING], [`o ${caller.owner.toLowerCase()}`, OFFER_CUTS_PER_OWNER]]
          if (caller.client !== undefined) counts.push([`c ${caller.client}`, OFFER_CUTS_PER_CLIENT])
          if (offerCuts >= MAX_OFFER_CUTS || !counts.every(([k, limit]) => below(k, limit, now))) return Effect.succeed(Option.none<ArchiveDigest>())
          for (const [k] of counts) count(k, now)
        }
        // Given up after the wait, or failed: none (the cut goes on, detached, or the failure is remembered).
        return Effect.flatMap(cutOf(key, ref, commitSha, token, "offer"), ({ cut }) =>
          Deferred.await(cut).pipe(
            Effect.timeout(OFFER_CUT_WAIT),
            Effect.orElseSucceed(() => Option.none<ArchiveDigest>())
          ))
      }))

  return { digestFor, digestForOffer } as const
}

/**
 * Digests of commits' archives, cut when not yet known: one per app, shared by the purchase (offers and
 * deliveries) and the repo page, so that they start and wait for the same cuts.
 */
export class ArchiveCuts extends Effect.Service<ArchiveCuts>()("repomarket/ArchiveCuts", {
  effect: Effect.map(CodeHost, makeArchiveCuts)
}) {}

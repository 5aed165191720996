import { Clock, Deferred, Duration, Effect, type Exit, FiberId, Option, type Redacted } from "effect"
import { commitKey, type RepoRef } from "../model/Ids.js"
import type { ArchiveDigest } from "../model/ReceiptClaims.js"
import { CodeHost, type CodeHostError } from "../ports/CodeHost.js"

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

/** After a failed cut, offers of that commit do not try again for this long (a paid delivery does). */
export const OFFER_CUT_RETRY = Duration.minutes(1)

/** Commits remembered as not kept by the code host's adapter (or whose cut failed lately); the oldest dropped first. */
const MAX_DECLINED = 10_000

type Cut = Deferred.Deferred<Option.Option<ArchiveDigest>, CodeHostError>

/**
 * The digest of a commit's archive, the archive cut first when none was (`CodeHost.cut`: read whole and kept, so
 * the next `archive` of that commit is those bytes, checked against that digest). That is how a live delivery
 * carries its `Repr-Digest` and a receipt naming its bytes, the first delivery of a commit too, and how an offer
 * names the digest before anybody bought that commit (the repo page too).
 *
 * - One cut per commit runs at a time (the repository lower case, as the code host's names are
 *   case-insensitive): a second buyer, or an offer, waits for the one running. Cuts run detached from the
 *   request that started them, so a buyer who hangs up wastes nothing the next buyer needs.
 * - An archive the adapter cannot keep (larger than it keeps) is remembered as such: its deliveries stream
 *   straight from the code host as before, without a digest ahead of their bytes, and its offers name none.
 */
const makeArchiveCuts = (host: CodeHost["Type"]) => {
  const running = new Map<string, Cut>()
  /** Commit → until when offers leave it alone (forever: not kept by the adapter; a while: its cut failed). */
  const declined = new Map<string, number>()
  let offerCuts = 0

  const decline = (key: string, until: number) => {
    declined.delete(key)
    if (declined.size >= MAX_DECLINED) declined.delete(declined.keys().next().value!)
    declined.set(key, until)
  }

  /** The cut of a commit, remembering how it ended. */
  const cutting = (key: string, ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>) =>
    host.cut(ref, commitSha, token).pipe(
      Effect.tap((digest) => Effect.sync(() => Option.isNone(digest) ? decline(key, Infinity) : declined.delete(key))),
      Effect.tapError(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => decline(key, now + Duration.toMillis(OFFER_CUT_RETRY)))))
    )

  /**
   * The cut of this commit that is running, or a new one (counted among the offers' cuts while it runs when
   * `forOffer`). A new cut is in `running` before it starts and leaves it as it ends, so every caller in between
   * waits for that one.
   */
  const cutOf = (key: string, ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>, forOffer: boolean) =>
    Effect.suspend((): Effect.Effect<Cut> => {
      const before = running.get(key)
      if (before !== undefined) return Effect.succeed(before)
      const cut: Cut = Deferred.unsafeMake(FiberId.none)
      running.set(key, cut)
      if (forOffer) offerCuts++
      const ended = (exit: Exit.Exit<Option.Option<ArchiveDigest>, CodeHostError>) =>
        Effect.suspend(() => {
          running.delete(key)
          if (forOffer) offerCuts--
          return Deferred.done(cut, exit)
        })
      return Effect.as(Effect.forkDaemon(Effect.onExit(cutting(key, ref, commitSha, token), ended)), cut)
    })

  /**
   * For a delivery: the commit's digest, known or cut now (the first buyer's first byte then waits for the
   * archive, once per commit). None when the adapter does not keep that archive, or kept its quota from the cut
   * (`quota_reserved`: a cut is ahead of a sale, a delivery is not): the delivery streams it straight from the
   * code host. The code host's failure when the cut failed otherwise.
   */
  const digestFor = (ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>) =>
    Effect.flatMap(host.archiveDigest(ref, commitSha), (known) => {
      const key = commitKey(ref, commitSha)
      if (Option.isSome(known) || declined.get(key) === Infinity) return Effect.succeed(known)
      return Effect.flatMap(cutOf(key, ref, commitSha, token, false), Deferred.await).pipe(
        Effect.catchIf((e) => e.reason === "quota_reserved", () => Effect.succeed(Option.none<ArchiveDigest>()))
      )
    })

  /**
   * For an offer: the commit's digest if known, else a cut started (or joined) and waited for at most
   * `OFFER_CUT_WAIT`. None when it takes longer, when the adapter does not keep that archive, when its cut failed
   * (lately: see `OFFER_CUT_RETRY`), or when `MAX_OFFER_CUTS` offers' cuts are running already; the offer then
   * names the commit only.
   */
  const digestForOffer = (ref: RepoRef, commitSha: string, token: Option.Option<Redacted.Redacted<string>>) =>
    Effect.flatMap(host.archiveDigest(ref, commitSha), (known) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = commitKey(ref, commitSha)
        if (Option.isSome(known) || (declined.get(key) ?? 0) > now) return Effect.succeed(known)
        if (!running.has(key) && offerCuts >= MAX_OFFER_CUTS) return Effect.succeed(Option.none<ArchiveDigest>())
        // Given up after the wait, or failed: none (the cut goes on, detached, or the failure is remembered).
        return Effect.flatMap(cutOf(key, ref, commitSha, token, true), (cut) =>
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

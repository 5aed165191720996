import { join } from "node:path"
import { Clock, type Context, Effect, Layer, Logger, LogLevel, Option, type Redacted, Schema, Stream } from "effect"
import { RepoRef } from "../../domain/Ids.js"
import { CodeHost, CodeHostError, type OwnerRepo, type Readme, type RepoInfo, type RepoTree } from "../../ports/CodeHost.js"
import { ArchiveDigests, isCommitId } from "../crypto/ArchiveDigests.js"
import { ArchiveSeal } from "../crypto/ArchiveSeal.js"
import { loadKeyRing } from "../crypto/SecretKeys.js"
import { ArchiveCache } from "./ArchiveCache.js"
import { ArchiveDisk } from "./ArchiveDisk.js"
import { credentialKey, EtagCache, weightOf } from "./EtagCache.js"
import { archiveStream } from "./GithubArchive.js"
import { GoneRepos } from "./GoneRepos.js"
import { type Answer, authorizationFor, DEFAULT_TUNING, type GetOptions, type GithubTuning, makeGithubClient } from "./GithubClient.js"
import { archiveCacheBytes, archiveOfferBytes, dataDir, githubEndpoints, githubQuotaReservePercent, githubServerToken } from "./GithubConfig.js"
import {
  commitShaOf,
  decode,
  hasNextPage,
  ownerRepoOf,
  ReadmeJson,
  RepoJson,
  TreeItemJson,
  TreeJson,
  treeEntriesOf
} from "./GithubShapes.js"
import { ReadmePackagesModule } from "../LazyModules.js"
import { QuotaMeter } from "./Quota.js"
import { clipUtf8, readmeRenderer } from "./ReadmeHtml.js"

type Token = Option.Option<Redacted.Redacted<string>>

/** A remembered "not found" in the answer cache. */
class Missing {
  constructor(readonly error: CodeHostError) {}
}

/** A spare lookup kept from the quota while a stale answer is cached: that answer is served as it is. */
class Stale {
  constructor(readonly error: CodeHostError) {}
}

const enc = encodeURIComponent

/**
 * The CodeHost port over GitHub's REST API (`GITHUB_API_URL`, optional `GITHUB_TOKEN` for public reads).
 * Previews and owner indexes are cached per process and revalidated with ETags (see EtagCache); archives
 * stream without buffering (see GithubArchive), and small archives of pinned commits are kept (ArchiveCache).
 */
export const makeCodeHostGithub = (tuning: GithubTuning = DEFAULT_TUNING) =>
  Effect.gen(function*() {
    const endpoints = yield* githubEndpoints
    const serverToken = yield* githubServerToken
    const reservePercent = yield* githubQuotaReservePercent
    const quota = new QuotaMeter(Option.match(reservePercent, { onNone: () => tuning.quotaReserveShare, onSome: (p) => p / 100 }))
    const client = makeGithubClient(endpoints, serverToken, tuning, quota)
    const cache = new EtagCache({ freshMs: tuning.freshMs, maxEntries: tuning.cacheMaxEntries, maxWeight: tuning.cacheMaxWeight })
    const archives = new ArchiveCache(tuning.archiveCacheEntryBytes, tuning.archiveCacheBytes)
    const diskBytes = Option.getOrElse(yield* archiveCacheBytes, () => tuning.archiveDiskBytes)
    const offerBytes = diskBytes > 0 ? Option.getOrElse(yield* archiveOfferBytes, () => tuning.archiveOfferBytes) : 0
    // Archives on disk are sealed with SECRET_KEYS (the development key too, whose warning the SecretBox gives).
    const seal = diskBytes > 0 ? new ArchiveSeal(yield* Logger.withMinimumLogLevel(loadKeyRing, LogLevel.Error)) : null
    const dir = yield* dataDir
    /** Offers' cuts (unpaid requests), apart from purchased archives: each at most a quarter, so four cuts at once fit. */
    const offers = seal !== null && offerBytes > 0
      ? new ArchiveDisk(join(dir, "archives-offers"), offerBytes, seal, { maxEntryBytes: Math.floor(offerBytes / 4) })
      : null
    /** Purchased archives; an offer's cut a sale delivers is moved in here from `offers`. */
    const disk = seal !== null ? new ArchiveDisk(join(dir, "archives"), diskBytes, seal, { from: offers }) : null
    // Partial files a crashed process left, and archives an earlier version kept in the clear, before any download.
    yield* Effect.promise(() => Promise.all([disk?.sweep(), offers?.sweep()]))
    const digests = new ArchiveDigests()
    /** Repositories and commits GitHub said are gone, per credential: asked again only after a while (GoneRepos). */
    const gone = new GoneRepos()
    /** The largest archive this adapter keeps (on disk, else in memory): what a delivery's cut may read. */
    const keeps = Math.max(disk?.maxBytes ?? 0, Math.min(tuning.archiveCacheEntryBytes, tuning.archiveCacheBytes))
    /** The largest archive an offer's cut keeps: what it may read. */
    const offerKeeps = offers?.maxEntryBytes ?? 0
    // The README renderer's packages are loaded with the first README this process reads, not at start.
    const loadReadmePackages = yield* ReadmePackagesModule
    // Loaded once and shared by concurrent first readers; a failed load is not kept, so the next README tries again.
    let loading: Promise<ReturnType<typeof readmeRenderer>> | undefined
    const renderer = Effect.promise(() =>
      loading ??= loadReadmePackages().then(readmeRenderer, (error: unknown) => {
        loading = undefined
        throw error
      })
    )

    /**
     * One cached GET: a fresh entry answers without a request; a stale one is revalidated (304 renews it);
     * a new answer is decoded and stored. Failures are not cached, except, where `rememberMissing` says so,
     * GitHub's "not found" (for `missingFreshMs`, never revalidated).
     */
    const cachedGet = <A>(
      route: string,
      params: Record<string, string | number>,
      options: GetOptions,
      read: (answer: Extract<Answer, { _tag: "Ok" }>) => Effect.Effect<A, CodeHostError>,
      rememberMissing = false
    ): Effect.Effect<A, CodeHostError> =>
      Effect.gen(function*() {
        const key = `${route} ${JSON.stringify(params)} ${options.accept ?? ""} ${credentialKey(options.token)}`
        const entry = cache.get<A | Missing>(key)
        if (entry !== undefined && cache.isFresh(entry, yield* Clock.currentTimeMillis)) {
          return entry.value instanceof Missing ? yield* entry.value.error : entry.value
        }
        const answer = yield* client.get(route, params, { ...options, etag: entry?.value instanceof Missing ? null : entry?.etag ?? null }).pipe(
          // Kept from the quota (a spare lookup): a stale answer is better than none, and costs nothing.
          Effect.catchIf(
            (e) => e.reason === "quota_reserved" && entry !== undefined,
            (e) => entry!.value instanceof Missing ? Effect.fail(entry!.value.error) : Effect.succeed<Answer | Stale>(new Stale(e))
          ),
          Effect.tapError((e) =>
            rememberMissing && e.reason === "repo_not_found"
              ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.sync(() => cache.set(key, null, new Missing(e), 64, now, tuning.missingFreshMs)))
              : Effect.void
          )
        )
        if (answer instanceof Stale) return entry!.value as A
        const now = yield* Clock.currentTimeMillis
        if (answer._tag === "NotModified") {
          if (entry !== undefined && !(entry.value instanceof Missing)) {
            cache.renew(key, now)
            return entry.value
          }
          return yield* new CodeHostError({ reason: "unavailable", message: "The code host answered 304 to an unconditional request." })
        }
        const value = yield* read(answer)
        cache.set(key, answer.etag, value, weightOf(value), now)
        return value
      })

    // Names are case-insensitive on GitHub: asking in lower case lets every spelling share one cache entry.
    const repoJson = (owner: string, name: string, token: Token) =>
      cachedGet("GET /repos/{owner}/{repo}", { owner: owner.toLowerCase(), repo: name.toLowerCase() }, { token, what: "repository" }, (a) =>
        decode(RepoJson, "repository")(a.data))

    const headSha = (ref: RepoRef, branch: string, token: Token) =>
      cachedGet(
        "GET /repos/{owner}/{repo}/commits/{ref}",
        { owner: ref.owner, repo: ref.name, ref: branch },
        { token, what: "repository", accept: "application/vnd.github.sha" },
        (a) => commitShaOf(a.data)
      )

    const repo = (ref: { readonly owner: string; readonly name: string }, token: Token) =>
      gone.guard(ref, token, Effect.gen(function*() {
        const json = yield* repoJson(ref.owner, ref.name, token)
        // GITHUB_TOKEN is for public reads only: a private repo it happens to see (the operator's own) must
        // not become listable, previewable or sellable without the seller's own token.
        if (json.private && Option.isNone(token)) {
          return yield* new CodeHostError({ reason: "repo_not_found", message: "The repository is missing or private (add host_pat)." })
        }
        const canonical = new RepoRef({ owner: json.owner.login, name: json.name })
        const sha = yield* headSha(canonical, json.default_branch, token)
        return {
          ...ownerRepoOf(json),
          ref: canonical,
          defaultBranch: json.default_branch,
          headSha: sha
        } satisfies RepoInfo
      })).pipe(Effect.withSpan("CodeHostGithub.repo"))

    const tree = (info: RepoInfo, token: Token) =>
      gone.guard(info.ref, token, cachedGet(
        "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
        { owner: info.ref.owner, repo: info.ref.name, tree_sha: info.headSha, recursive: "1" },
        { token, what: "repository" },
        (a) =>
          Effect.gen(function*() {
            const json = yield* decode(TreeJson, "file tree")(a.data)
            const kept = json.tree.slice(0, tuning.maxTreeEntries)
            const items = yield* decode(Schema.Array(TreeItemJson), "file tree")(kept)
            return {
              entries: treeEntriesOf(items),
              truncated: json.truncated || json.tree.length > tuning.maxTreeEntries
            } satisfies RepoTree
          })
      )).pipe(Effect.withSpan("CodeHostGithub.tree"))

    // Checked against the repositories remembered as gone, never one itself: GitHub's 404 here means "no README".
    const readme = (info: RepoInfo, token: Token) =>
      Effect.zipRight(gone.guard(info.ref, token, Effect.void), cachedGet(
        "GET /repos/{owner}/{repo}/readme",
        { owner: info.ref.owner, repo: info.ref.name, ref: info.headSha },
        { token, what: "repository" },
        (a) =>
          Effect.gen(function*() {
            const json = yield* decode(ReadmeJson, "README")(a.data)
            const render = yield* renderer
            const bytes = json.encoding === "base64" ? Buffer.from(json.content, "base64") : Buffer.from(json.content, "utf8")
            const markdown = clipUtf8(bytes, tuning.maxReadmeBytes)
            const html = render(markdown, { htmlUrl: info.htmlUrl, branch: info.defaultBranch, path: json.path })
            return Option.some<Readme>({ path: json.path, markdown, html })
          })
      ).pipe(
        // No README is a 404 from GitHub; with a working token (the repo was just read) it means the same.
        Effect.catchIf(
          (e) => e.reason === "repo_not_found" || e.reason === "token_lacks_access",
          () => Effect.succeed(Option.none<Readme>())
        ),
        Effect.withSpan("CodeHostGithub.readme")
      ))

    /** One page of an owner's repos and whether another follows. */
    const ownerPage = (owner: string, page: number) =>
      cachedGet(
        "GET /users/{username}/repos",
        { username: owner.toLowerCase(), type: "owner", sort: "pushed", per_page: 100, page },
        // Anybody may ask for any owner's page: a spare call, never made below the quota's reserve.
        { token: Option.none(), what: "owner", spare: true },
        (a) =>
          Effect.map(decode(Schema.Array(RepoJson), "owner's repositories")(a.data), (repos) => ({
            repos,
            next: hasNextPage(a.headers["link"])
          })),
        // Owner pages are public: a made-up name is asked of GitHub once per window, not once per view.
        page === 1
      )

    /**
     * The owner's public repositories, most recently pushed first, up to `maxOwnerPages` pages of 100.
     * Forks (someone else's work) and archived repos (read-only, unmaintained) are left out of the index.
     */
    const ownerRepos = (owner: string) =>
      Effect.gen(function*() {
        const out: Array<OwnerRepo> = []
        for (let page = 1; page <= tuning.maxOwnerPages; page++) {
          const { next, repos } = yield* ownerPage(owner, page)
          for (const json of repos) if (!json.fork && !json.archived && !json.private) out.push(ownerRepoOf(json))
          if (!next) break
        }
        return out as ReadonlyArray<OwnerRepo>
      }).pipe(Effect.withSpan("CodeHostGithub.ownerRepos"))

    const service: Context.Tag.Service<CodeHost> = {
      repo,
      tree,
      readme,
      archive: (ref, commitSha, token) => {
        const download = gone.guardArchive(ref, commitSha, token, archiveStream(endpoints, serverToken, tuning, quota, ref, commitSha, token))
        // Memory first (small archives, per credential), then the disk (any size, per repo and commit); whichever
        // answers, the bytes are checked against the commit's digest (recorded by its first whole archive).
        return digests.through(
          ref,
          commitSha,
          archives.through(ref, commitSha, credentialKey(token), disk === null ? download : disk.through(ref, commitSha, download))
        )
      },
      // Learnt from the first whole archive cut here, or from one kept on disk (by another process sharing
      // DATA_DIR, or before a restart); then held in memory, so the 402's hot path reads the disk at most once.
      archiveDigest: (ref, commitSha) =>
        Effect.suspend(() => {
          const known = digests.get(ref, commitSha)
          if (known !== undefined) return Effect.succeed(Option.some(known))
          const kept = (store: ArchiveDisk | null) => store === null ? Effect.succeed(Option.none()) : store.digest(ref, commitSha)
          return kept(disk).pipe(
            Effect.flatMap((found) => Option.isSome(found) ? Effect.succeed(found) : kept(offers)),
            Effect.map(Option.filter((d) => digests.learn(ref, commitSha, d)))
          )
        }),
      // Read no further than this adapter keeps for the purpose (a delivery: the disk's budget, else one archive in
      // memory; an offer: a quarter of the offers' budget): beyond it the bytes would be downloaded again, so the
      // download stops and nothing is promised. An offer's cut is kept apart from purchased archives, and comes
      // ahead of any sale: with the server's credential a spare call, never below the quota's reserve. A delivery's
      // cut is the delivery's own download, kept with the purchased archives.
      cut: (ref, commitSha, token, purpose) =>
        Effect.flatMap(service.archiveDigest(ref, commitSha), (known) => {
          const bound = purpose === "paid" ? keeps : offerKeeps
          if (Option.isSome(known) || bound <= 0 || !isCommitId(commitSha)) return Effect.succeed(known)
          const spare = purpose === "offer" && authorizationFor(token, serverToken).credential !== "listing"
          const bytes = purpose === "paid" || offers === null
            ? service.archive(ref, commitSha, token)
            : digests.through(ref, commitSha, offers.through(ref, commitSha, gone.guardArchive(ref, commitSha, token, archiveStream(endpoints, serverToken, tuning, quota, ref, commitSha, token))))
          return Effect.zipRight(
            spare ? client.admitSpare : Effect.void,
            bytes.pipe(
              Stream.runFoldWhile(0, (read) => read <= bound, (read, chunk) => read + chunk.length),
              Effect.flatMap((read) => read > bound ? Effect.succeed(Option.none()) : service.archiveDigest(ref, commitSha))
            )
          )
        }),
      ownerRepos,
      ownerUrl: (owner) => `${endpoints.webUrl}/${enc(owner)}`
    }
    return service
  })

/** The CodeHost port over GitHub, configured from `GITHUB_API_URL` and `GITHUB_TOKEN`. */
export const CodeHostGithub = Layer.effect(CodeHost, makeCodeHostGithub())

/** The same with other internal limits (tests shorten waits and windows). */
export const CodeHostGithubWith = (tuning: Partial<GithubTuning>) =>
  Layer.effect(CodeHost, makeCodeHostGithub({ ...DEFAULT_TUNING, ...tuning }))

import { Context, Effect, Layer, Option, Redacted, Stream } from "effect"
import { RepoRef, repoKey } from "../../domain/Ids.js"
import { CodeHost, CodeHostError, type RepoInfo, type TreeEntry } from "../../ports/CodeHost.js"
import { ArchiveDigests } from "../crypto/ArchiveDigests.js"
import { escapeHtml } from "../../codec/EscapeHtml.js"

/** A repository the fake code host serves. Files are path → content. */
export interface FakeRepo {
  /** The owner's login. */
  readonly owner: string
  /** The repository name. */
  readonly name: string
  /** Private (needs `token`); default false. */
  readonly isPrivate?: boolean
  /** For a private repo: the one token that can read it. */
  readonly token?: string
  /** Default null. */
  readonly description?: string | null
  /** Default null. */
  readonly language?: string | null
  /** Default 0. */
  readonly stars?: number
  /** Default none. */
  readonly topics?: ReadonlyArray<string>
  /** An SPDX id; default null. */
  readonly license?: string | null
  /** Default `main`. */
  readonly defaultBranch?: string
  /**
   * The commit a buyer gets; a fixed fake sha by default. Putting the repo again with another `headSha` is a
   * push: the earlier commits stay readable by their sha (with the files they had), as on a code host.
   */
  readonly headSha?: string
  /** The repository's files, path to content. */
  readonly files?: Readonly<Record<string, string>>
}

/** Lets tests change the fake host while the server runs: add or remove repos, revoke tokens, go down. */
export class CodeHostMemoryControl extends Context.Tag("repomarket/CodeHostMemoryControl")<CodeHostMemoryControl, {
  /** Adds a repo, or replaces it: with another `headSha`, a push (earlier commits stay readable). */
  readonly put: (repo: FakeRepo) => Effect.Effect<void>
  readonly remove: (owner: string, name: string) => Effect.Effect<void>
  readonly setDown: (down: "rate_limited" | "unavailable" | null) => Effect.Effect<void>
  /** How many calls reached the host, to check caching. */
  readonly calls: Effect.Effect<number>
}>() {}

const fail = (reason: CodeHostError["reason"], message: string, retryAfterSeconds?: number) =>
  Effect.fail(new CodeHostError(retryAfterSeconds === undefined ? { reason, message } : { reason, message, retryAfterSeconds }))

/** The head commit of a fake repo. */
const headOf = (repo: FakeRepo): string => repo.headSha ?? "0123456789abcdef0123456789abcdef01234567"

const info = (repo: FakeRepo): RepoInfo => ({
  ref: new RepoRef({ owner: repo.owner, name: repo.name }),
  htmlUrl: `https://github.com/${repo.owner}/${repo.name}`,
  isPrivate: repo.isPrivate ?? false,
  defaultBranch: repo.defaultBranch ?? "main",
  headSha: headOf(repo),
  description: repo.description ?? null,
  language: repo.language ?? null,
  stars: repo.stars ?? 0,
  topics: repo.topics ?? [],
  license: repo.license ?? null
})

const treeOf = (files: Readonly<Record<string, string>>): ReadonlyArray<TreeEntry> => {
  const dirs = new Set<string>()
  for (const path of Object.keys(files)) {
    const parts = path.split("/")
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"))
  }
  return [
    ...[...dirs].map((path): TreeEntry => ({ path, type: "dir", size: null })),
    ...Object.entries(files).map(([path, content]): TreeEntry => ({ path, type: "file", size: content.length }))
  ].sort((a, b) => a.path.localeCompare(b.path))
}

/** An in-memory code host seeded with repos, for tests and embedding. */
export const CodeHostMemory = (seed: ReadonlyArray<FakeRepo> = []) =>
  Layer.effectContext(Effect.sync(() => {
    const repos = new Map(seed.map((r) => [repoKey(r.owner, r.name), r]))
    // Every commit each repo had as its head, with the repo as it was then: an archive is cut from a commit of
    // that repository only, never from a sha it never had (another repo's, or made up).
    const commits = new Map<string, Map<string, FakeRepo>>()
    const remember = (r: FakeRepo) => {
      const key = repoKey(r.owner, r.name)
      const known = commits.get(key) ?? new Map<string, FakeRepo>()
      commits.set(key, known.set(headOf(r).toLowerCase(), r))
    }
    seed.forEach(remember)
    const digests = new ArchiveDigests()
    let down: "rate_limited" | "unavailable" | null = null
    let calls = 0

    const access = (ref: { owner: string; name: string }, token: Option.Option<Redacted.Redacted<string>>) =>
      Effect.suspend(() => {
        calls++
        if (down === "rate_limited") return fail("rate_limited", "The code host's rate limit was reached.", 60)
        if (down === "unavailable") return fail("unavailable", "The code host did not answer.")
        const repo = repos.get(repoKey(ref.owner, ref.name))
        const given = Option.map(token, Redacted.value)
        if (!repo) {
          return Option.isSome(given)
            ? fail("token_lacks_access", "The token cannot read this repository, or it does not exist.")
            : fail("repo_not_found", "The repository does not exist or is private.")
        }
        if (!repo.isPrivate) return Effect.succeed(repo)
        if (Option.isNone(given)) return fail("private_repo_needs_token", "The repository is private.")
        if (given.value !== repo.token) return fail("token_rejected", "The token was rejected.")
        return Effect.succeed(repo)
      })

    // Encoded once per repo and commit, as a code host serves stored bytes: re-encoding a large fake repo
    // on every download would measure this fake, not the app (the checkout benchmark buys a 1 MiB repo).
    const archives = new WeakMap<FakeRepo, Map<string, ReadonlyArray<Uint8Array>>>()
    const archiveOf = (r: FakeRepo, commitSha: string) => {
      let bySha = archives.get(r)
      if (bySha === undefined) archives.set(r, bySha = new Map())
      const sha7 = commitSha.slice(0, 7)
      let chunks = bySha.get(sha7)
      if (chunks === undefined) {
        const encoder = new TextEncoder()
        chunks = Object.entries(r.files ?? {}).map(([path, content]) => encoder.encode(`${sha7} ${path}\n${content}\n`))
        bySha.set(sha7, chunks)
      }
      return chunks
    }

    const host: Context.Tag.Service<CodeHost> = {
      repo: (ref, token) => Effect.map(access(ref, token), info),
      tree: (repo, token) =>
        Effect.map(access(repo.ref, token), (r) => ({ entries: treeOf(r.files ?? {}), truncated: false })),
      readme: (repo, token) =>
        Effect.map(access(repo.ref, token), (r) => {
          const path = Object.keys(r.files ?? {}).find((p) => /^readme(\.md)?$/i.test(p))
          if (!path) return Option.none()
          const markdown = r.files![path]!
          return Option.some({ path, markdown, html: `<pre>${escapeHtml(markdown)}</pre>` })
        }),
      archive: (ref, commitSha, token) =>
        Stream.unwrap(Effect.flatMap(access(ref, token), (r) => {
          const at = commits.get(repoKey(r.owner, r.name))?.get(commitSha.toLowerCase())
          return at === undefined
            ? fail("repo_not_found", "The repository has no such commit.")
            : Effect.succeed(digests.through(ref, commitSha, Stream.fromIterable(archiveOf(at, commitSha))))
        })),
      archiveDigest: (ref, commitSha) => Effect.sync(() => Option.fromNullable(digests.get(ref, commitSha))),
      // Every archive is kept here (encoded once per commit), paid or not: a cut is the archive read to its end.
      cut: (ref, commitSha, token) =>
        Effect.zipRight(Stream.runDrain(host.archive(ref, commitSha, token)), host.archiveDigest(ref, commitSha)),
      ownerRepos: (owner) =>
        Effect.suspend(() => {
          calls++
          if (down !== null) return fail(down, "The code host is unavailable.", down === "rate_limited" ? 60 : undefined)
          const owned = [...repos.values()].filter((r) => r.owner.toLowerCase() === owner.toLowerCase())
          if (owned.length === 0) return fail("repo_not_found", "No such owner.")
          return Effect.succeed(owned.filter((r) => !r.isPrivate).map(info))
        }),
      ownerUrl: (owner) => `https://github.com/${owner}`
    }
    const control: Context.Tag.Service<CodeHostMemoryControl> = {
      put: (repo) =>
        Effect.sync(() => {
          repos.set(repoKey(repo.owner, repo.name), repo)
          remember(repo)
        }),
      remove: (owner, name) => Effect.sync(() => void repos.delete(repoKey(owner, name))),
      setDown: (state) => Effect.sync(() => void (down = state)),
      calls: Effect.sync(() => calls)
    }
    return Context.make(CodeHost, host).pipe(Context.add(CodeHostMemoryControl, control))
  }))

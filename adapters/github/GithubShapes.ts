import { Effect, Schema } from "effect"
import { RepoRef } from "../../domain/Ids.js"
import { CodeHostError, type OwnerRepo, type TreeEntry } from "../../ports/CodeHost.js"

/**
 * The parts of GitHub's REST answers this adapter reads (shapes from GitHub's REST documentation), and their
 * mapping to the port's domain types. Unknown fields are ignored; a missing required field is an unexpected
 * answer (`unavailable`), never a crash.
 */

const nullableString = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })

/** `GET /repos/{owner}/{repo}` and the items of `GET /users/{username}/repos`. */
export const RepoJson = Schema.Struct({
  name: Schema.String,
  owner: Schema.Struct({ login: Schema.String }),
  private: Schema.Boolean,
  html_url: Schema.String,
  description: nullableString,
  language: nullableString,
  stargazers_count: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  topics: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  license: Schema.optionalWith(Schema.NullOr(Schema.Struct({ spdx_id: nullableString })), { default: () => null }),
  default_branch: Schema.optionalWith(Schema.String, { default: () => "main" }),
  fork: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  archived: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type RepoJson = typeof RepoJson.Type

/** `GET /repos/{owner}/{repo}/git/trees/{sha}?recursive=1`; entries are decoded only up to our limit. */
export const TreeJson = Schema.Struct({
  truncated: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  tree: Schema.Array(Schema.Unknown)
})
export const TreeItemJson = Schema.Struct({
  path: Schema.String,
  type: Schema.String,
  size: Schema.optional(Schema.Number)
})

/** `GET /repos/{owner}/{repo}/readme` (default JSON media type: base64 content plus its path). */
export const ReadmeJson = Schema.Struct({
  path: Schema.String,
  content: Schema.optionalWith(Schema.String, { default: () => "" }),
  encoding: Schema.optionalWith(Schema.String, { default: () => "base64" })
})

/** `GET /user`. */
export const UserJson = Schema.Struct({ login: Schema.String })

const unexpected = (what: string) =>
  new CodeHostError({ reason: "unavailable", message: `The code host gave an unexpected answer for the ${what}.` })

/** Decodes an answer, turning a shape mismatch into `unavailable` (the details stay out of the message). */
export const decode = <A, I>(schema: Schema.Schema<A, I>, what: string) => (data: unknown) =>
  Effect.mapError(Schema.decodeUnknown(schema)(data), () => unexpected(what))

/** `NOASSERTION` (an unrecognised license) and `none` mean: no license identifier. */
export const licenseId = (license: RepoJson["license"]): string | null => {
  const id = license?.spdx_id ?? null
  return id === null || id === "" || id.toUpperCase() === "NOASSERTION" || id.toLowerCase() === "none" ? null : id
}

export const ownerRepoOf = (json: RepoJson): OwnerRepo => ({
  ref: new RepoRef({ owner: json.owner.login, name: json.name }),
  htmlUrl: json.html_url,
  isPrivate: json.private,
  description: json.description,
  language: json.language,
  stars: json.stargazers_count,
  topics: json.topics,
  license: licenseId(json.license)
})

/** A commit id as GitHub's `application/vnd.github.sha` media type returns it (text, maybe as bytes). */
export const commitShaOf = (data: unknown): Effect.Effect<string, CodeHostError> => {
  const text = typeof data === "string"
    ? data
    : data instanceof ArrayBuffer
    ? new TextDecoder().decode(data)
    : ""
  const sha = text.trim().toLowerCase()
  return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(sha) ? Effect.succeed(sha) : Effect.fail(unexpected("head commit"))
}

/**
 * Tree items as the port's entries: blobs are files, trees are directories. Submodules (`commit`) are left
 * out: their contents are not part of the archive a buyer receives, so listing them would mislead.
 */
export const treeEntriesOf = (items: ReadonlyArray<typeof TreeItemJson.Type>): Array<TreeEntry> =>
  items.flatMap((item): Array<TreeEntry> =>
    item.type === "blob"
      ? [{ path: item.path, type: "file", size: item.size ?? null }]
      : item.type === "tree"
      ? [{ path: item.path, type: "dir", size: null }]
      : []
  )

/** Whether a `Link` header announces another page. */
export const hasNextPage = (link: string | undefined): boolean => link !== undefined && /<[^>]*>;\s*rel="?next"?/.test(link)

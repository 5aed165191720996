import { Either } from "effect"

/** A repository named by a `host_url`. */
export interface ParsedHostUrl {
  /** The owner (user or organisation), as written in the URL. */
  readonly owner: string
  /** The repository name, without `.git`. */
  readonly name: string
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/
const NAME = /^[A-Za-z0-9._-]{1,100}$/

/**
 * `host_url` must be `https://github.com/<owner>/<repo>`; a trailing `/` or `.git` and a `www.` host are
 * tolerated. Owner and repo follow GitHub's naming rules, so nothing odd reaches the code host.
 */
export const parseHostUrl = (input: string): Either.Either<ParsedHostUrl, string> => {
  const problem = "must be a GitHub repository URL like https://github.com/<owner>/<repo>"
  let url: URL
  try {
    // Stryker disable next-line MethodExpression: the URL parser itself strips leading and trailing spaces and control characters
    url = new URL(input.trim())
  } catch {
    return Either.left(problem)
  }
  const host = url.hostname.toLowerCase()
  if (url.protocol !== "https:" || (host !== "github.com" && host !== "www.github.com")) return Either.left(problem)
  if (url.username || url.password || url.port || url.search || url.hash) return Either.left(problem)
  const parts = url.pathname.replace(/\/+$/, "").split("/").slice(1)
  if (parts.length !== 2) return Either.left(problem)
  const owner = parts[0]!
  const name = parts[1]!.replace(/\.git$/i, "")
  if (!OWNER.test(owner) || !NAME.test(name) || name === "." || name === "..") return Either.left(problem)
  return Either.right({ owner, name })
}

/** Owner and repo names as they may appear in a page path. */
export const isPlausibleOwner = (owner: string): boolean => OWNER.test(owner)
/** Whether a string follows the code host's repository naming rules. */
export const isPlausibleRepoName = (name: string): boolean => NAME.test(name) && name !== "." && name !== ".."

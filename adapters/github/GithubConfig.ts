import { Config, ConfigError, Either, Option, Redacted } from "effect"

/** Where the code host answers: its REST API and its web pages (repos, owners, the OAuth screens). */
export interface GithubEndpoints {
  /** API base without a trailing slash, e.g. `https://api.github.com` or `https://ghe.example/api/v3`. */
  readonly apiUrl: string
  /** Web base without a trailing slash, e.g. `https://github.com` or `https://ghe.example`. */
  readonly webUrl: string
}

const DEFAULT_API_URL = "https://api.github.com"

/**
 * The web base that belongs to an API base: `api.github.com` → `github.com`; GitHub Enterprise Server's
 * `https://host/api/v3` → `https://host`; anything else (a test server) serves both from its own origin.
 */
export const webUrlOf = (apiUrl: string): string => {
  const url = new URL(apiUrl)
  if (url.hostname.toLowerCase() === "api.github.com") return `${url.protocol}//github.com`
  const path = url.pathname.replace(/\/+$/, "")
  const enterprise = /^(.*)\/api\/v3$/i.exec(path)
  return enterprise ? `${url.origin}${enterprise[1]}` : `${url.origin}${path}`
}

/** Parses an API base: http(s), no credentials, query or fragment. */
export const parseApiUrl = (raw: string): Either.Either<GithubEndpoints, string> => {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return Either.left("GITHUB_API_URL must be a URL like https://api.github.com")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return Either.left("GITHUB_API_URL must be an http(s) URL")
  if (url.username || url.password || url.search || url.hash) {
    return Either.left("GITHUB_API_URL must not carry credentials, a query or a fragment")
  }
  const apiUrl = `${url.origin}${url.pathname.replace(/\/+$/, "")}`
  return Either.right({ apiUrl, webUrl: webUrlOf(apiUrl) })
}

/** `GITHUB_API_URL` (default `https://api.github.com`); a malformed value stops start-up naming the setting. */
export const githubEndpoints: Config.Config<GithubEndpoints> = Config.string().pipe(
  Config.withDefault(DEFAULT_API_URL),
  Config.mapOrFail((raw) =>
    parseApiUrl(raw === "" ? DEFAULT_API_URL : raw).pipe(Either.mapLeft((m) => ConfigError.InvalidData([], m)))
  ),
  Config.nested("GITHUB_API_URL")
)

const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((value) => Redacted.value(value).trim() !== ""))
  )

/** `GITHUB_TOKEN`: the server's own token for public reads (a higher rate limit); unset is fine. */
export const githubServerToken: Config.Config<Option.Option<Redacted.Redacted<string>>> = optionalSecret("GITHUB_TOKEN")

/** The GitHub OAuth app of the code-host connection. */
export interface OAuthApp {
  /** The app's client id. */
  readonly clientId: string
  /** The app's client secret. */
  readonly clientSecret: Redacted.Redacted<string>
}

/**
 * `GITHUB_CLIENT_ID` + `GITHUB_CLIENT_SECRET`: the OAuth app of the code-host connection. Both unset: the
 * connection is off. Only one of them set is a mistake that stops start-up, naming the missing one.
 */
export const githubOAuthApp: Config.Config<Option.Option<OAuthApp>> = Config.all({
  clientId: Config.option(Config.string("GITHUB_CLIENT_ID")).pipe(Config.map(Option.filter((s) => s.trim() !== ""))),
  clientSecret: optionalSecret("GITHUB_CLIENT_SECRET")
}).pipe(
  Config.mapOrFail(({ clientId, clientSecret }) => {
    if (Option.isSome(clientId) && Option.isSome(clientSecret)) {
      return Either.right(Option.some({ clientId: clientId.value.trim(), clientSecret: clientSecret.value }))
    }
    if (Option.isNone(clientId) && Option.isNone(clientSecret)) return Either.right(Option.none())
    const missing = Option.isNone(clientId) ? "GITHUB_CLIENT_ID" : "GITHUB_CLIENT_SECRET"
    return Either.left(ConfigError.InvalidData([missing], `${missing} must be set together with the other half of the OAuth app`))
  })
)

/**
 * `GITHUB_QUOTA_RESERVE_PERCENT` (0–90; unset: 20, see Quota.ts): the share of the server credential's hourly
 * GitHub quota that anonymous lookups (owner indexes) never spend, kept for previews, listing and purchases.
 */
export const githubQuotaReservePercent: Config.Config<Option.Option<number>> = Config.option(
  Config.integer("GITHUB_QUOTA_RESERVE_PERCENT").pipe(
    Config.validate({ message: "GITHUB_QUOTA_RESERVE_PERCENT must be a whole number from 0 to 90", validation: (n) => n >= 0 && n <= 90 })
  )
)

/**
 * `ARCHIVE_CACHE_BYTES` (unset: 1 GiB; 0 turns it off): bytes of purchased archives kept on disk under
 * `<DATA_DIR>/archives` (ArchiveDisk.ts), so re-downloads do not go back to the code host. Only other purchases
 * make one leave (least recently used first), never an unpaid request (see `ARCHIVE_OFFER_BYTES`).
 */
export const archiveCacheBytes: Config.Config<Option.Option<number>> = Config.option(
  Config.integer("ARCHIVE_CACHE_BYTES").pipe(
    Config.validate({ message: "ARCHIVE_CACHE_BYTES must be a whole number of bytes, 0 or more", validation: (n) => n >= 0 })
  )
)

/**
 * `ARCHIVE_OFFER_BYTES` (unset: 128 MiB; 0 turns it off): bytes of archives cut for offers (402s, repo page views:
 * unpaid requests) kept on disk under `<DATA_DIR>/archives-offers`, apart from purchased ones, so they never push a
 * purchased archive out. An offer cuts an archive of at most a quarter of it; a larger one is offered without a
 * digest until its first sale. Off whenever `ARCHIVE_CACHE_BYTES` is 0.
 */
export const archiveOfferBytes: Config.Config<Option.Option<number>> = Config.option(
  Config.integer("ARCHIVE_OFFER_BYTES").pipe(
    Config.validate({ message: "ARCHIVE_OFFER_BYTES must be a whole number of bytes, 0 or more", validation: (n) => n >= 0 })
  )
)

/** `DATA_DIR` (default `./.data`): where the archives are kept, under `archives/` (and `archives-offers/`). */
export const dataDir: Config.Config<string> = Config.string("DATA_DIR").pipe(
  Config.withDefault("./.data"),
  Config.map((dir) => (dir.trim() === "" ? "./.data" : dir))
)

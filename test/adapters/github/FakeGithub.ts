import { createHash } from "node:crypto"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"

/**
 * A fake GitHub for msw: the REST endpoints the adapter uses, answering with the shapes, status codes and
 * headers of GitHub's REST documentation (404 for a private repo read anonymously, 401 "Bad credentials",
 * 403 + x-ratelimit-* for a primary rate limit, ETag / 304 for conditional requests, a 302 from the tarball
 * endpoint to codeload, OAuth errors answered with 200).
 */
export const API = "https://api.github.com"
export const WEB = "https://github.com"
export const CODELOAD = "https://codeload.github.com"

export interface GhRepo {
  readonly owner: string
  readonly name: string
  readonly private?: boolean
  /** For a private repo: the one token that can read it. */
  readonly token?: string
  readonly description?: string | null
  readonly language?: string | null
  readonly stars?: number
  readonly topics?: ReadonlyArray<string>
  readonly license?: string | null
  readonly defaultBranch?: string
  readonly sha?: string
  readonly fork?: boolean
  readonly archived?: boolean
  readonly tree?: ReadonlyArray<{ readonly path: string; readonly type: "blob" | "tree" | "commit"; readonly size?: number }>
  readonly treeTruncated?: boolean
  readonly readme?: { readonly path: string; readonly text: string }
  /** Tarball bytes served by codeload. */
  readonly tarball?: Uint8Array
  /** Logins with admin rights on the repo besides its owner (e.g. an organisation's owners and repo admins). */
  readonly admins?: ReadonlyArray<string>
}

export interface Call {
  readonly method: string
  readonly url: URL
  readonly authorization: string | null
  readonly ifNoneMatch: string | null
  readonly status: number
}

const HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"

const etagOf = (body: string) => `W/"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`

const notFound = () =>
  HttpResponse.json(
    { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" },
    { status: 404 }
  )

const badCredentials = () =>
  HttpResponse.json(
    { message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" },
    { status: 401 }
  )

const b64lines = (text: string) => (Buffer.from(text, "utf8").toString("base64").match(/.{1,60}/g) ?? []).join("\n") + "\n"

export const makeFakeGithub = (initial: ReadonlyArray<GhRepo>) => {
  const repos = new Map(initial.map((r) => [`${r.owner}/${r.name}`.toLowerCase(), r]))
  const calls: Array<Call> = []
  /** code → the login it proves, and the PKCE challenge and redirect_uri of the authorization that issued it. */
  const oauthCodes = new Map<string, { readonly login: string; readonly challenge?: string; readonly redirectUri?: string }>()
  let pkceVerified = 0
  const oauthTokens = new Map<string, string>()
  let rateLimited: { readonly resetEpochSeconds: number } | null = null
  /**
   * GitHub's primary rate limit for the server's credential, counted as GitHub counts it: every API answer
   * carries x-ratelimit-* headers and spends one (a 304 to an authorized conditional request spends none);
   * at 0 the API answers 403 until the reset. Null: no headers, no counting (as the fake always did).
   */
  let quota: { limit: number; remaining: number; resetEpochSeconds: number } | null = null
  let rateLimitChecks = 0
  /** An answer that replaces the tarball endpoint's redirect (the archive alone failing: a 5xx, a rate limit). */
  let archiveFailure: (() => Response) | null = null

  const bearer = (request: Request) => {
    const header = request.headers.get("authorization")
    return header === null ? null : header.replace(/^(Bearer|token)\s+/i, "")
  }

  const record = (request: Request, status: number) => {
    calls.push({
      method: request.method,
      url: new URL(request.url),
      authorization: request.headers.get("authorization"),
      ifNoneMatch: request.headers.get("if-none-match"),
      status
    })
  }

  /** Applies GitHub's visibility rules; returns the repo or the answer to send instead. */
  const visible = (request: Request, owner: string, name: string): GhRepo | Response => {
    const token = bearer(request)
    const knownTokens = new Set([...repos.values()].flatMap((r) => (r.token ? [r.token] : [])))
    if (token !== null && !knownTokens.has(token) && !oauthTokens.has(token) && token !== "server-token") return badCredentials()
    const repo = repos.get(`${owner}/${name}`.toLowerCase())
    if (repo === undefined) return notFound()
    if (repo.private && token !== repo.token) return notFound()
    return repo
  }

  /** JSON with an ETag; a matching If-None-Match gets 304 with no body. */
  const withEtag = (request: Request, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body)
    const etag = etagOf(text)
    if (request.headers.get("if-none-match") === etag) return new HttpResponse(null, { status: 304, headers: { etag } })
    return new HttpResponse(text, { status: 200, headers: { "content-type": "application/json; charset=utf-8", etag, ...headers } })
  }

  const repoJson = (r: GhRepo) => ({
    id: 1296269,
    node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    owner: { login: r.owner, id: 1, type: "User" },
    private: r.private ?? false,
    html_url: `${WEB}/${r.owner}/${r.name}`,
    description: r.description ?? null,
    fork: r.fork ?? false,
    url: `${API}/repos/${r.owner}/${r.name}`,
    language: r.language ?? null,
    stargazers_count: r.stars ?? 0,
    watchers_count: r.stars ?? 0,
    topics: r.topics ?? [],
    archived: r.archived ?? false,
    disabled: false,
    visibility: r.private ? "private" : "public",
    default_branch: r.defaultBranch ?? "main",
    license: r.license === undefined || r.license === null
      ? null
      : { key: r.license.toLowerCase(), name: r.license, spdx_id: r.license, url: null, node_id: "MDc6TGljZW5zZW1pdA==" }
  })

  const quotaHeaders = (q: { limit: number; remaining: number; resetEpochSeconds: number }) => ({
    "x-ratelimit-limit": String(q.limit),
    "x-ratelimit-remaining": String(q.remaining),
    "x-ratelimit-used": String(q.limit - q.remaining),
    "x-ratelimit-reset": String(q.resetEpochSeconds),
    "x-ratelimit-resource": "core"
  })

  /** Wraps a handler: a rate limit answers first when switched on, and every call is recorded. */
  const guarded = (handler: (info: { request: Request; params: Record<string, string | ReadonlyArray<string> | undefined> }) => Response | Promise<Response>) =>
    async (info: { request: Request; params: Record<string, string | ReadonlyArray<string> | undefined> }) => {
      let response: Response
      const toApi = new URL(info.request.url).origin === API
      // Only the server's own credential (or none) is counted: a listing's token has a budget of its own.
      const counted = quota !== null && toApi && [null, "server-token"].includes(bearer(info.request))
      if (counted && quota!.remaining === 0) {
        response = HttpResponse.json(
          { message: "API rate limit exceeded for 203.0.113.7.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" },
          { status: 403, headers: quotaHeaders(quota!) }
        )
      } else if (rateLimited !== null && toApi) {
        response = HttpResponse.json(
          { message: "API rate limit exceeded for 203.0.113.7.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" },
          {
            status: 403,
            headers: {
              "x-ratelimit-limit": "60",
              "x-ratelimit-remaining": "0",
              "x-ratelimit-used": "60",
              "x-ratelimit-reset": String(rateLimited.resetEpochSeconds),
              "x-ratelimit-resource": "core"
            }
          }
        )
      } else {
        response = await handler(info)
        if (counted) {
          const free = response.status === 304 && info.request.headers.get("authorization") !== null
          if (!free) quota!.remaining--
          const headers = new Headers(response.headers)
          for (const [k, v] of Object.entries(quotaHeaders(quota!))) headers.set(k, v)
          response = new Response(response.body, { status: response.status, headers })
        }
      }
      record(info.request, response.status)
      return response
    }

  const p = (params: Record<string, string | ReadonlyArray<string> | undefined>, name: string) => String(params[name])

  const handlers = [
    http.get(`${API}/repos/:owner/:repo`, guarded(({ params, request }) => {
      const repo = visible(request, p(params, "owner"), p(params, "repo"))
      if (repo instanceof Response) return repo
      // As GitHub documents, an authenticated user's request also gets that user's permissions on the repo.
      const login = oauthTokens.get(bearer(request) ?? "")
      if (login === undefined) return withEtag(request, repoJson(repo))
      const admin = [repo.owner, ...(repo.admins ?? [])].some((l) => l.toLowerCase() === login.toLowerCase())
      return withEtag(request, { ...repoJson(repo), permissions: { admin, maintain: admin, push: admin, triage: admin, pull: true } })
    })),
    http.get(`${API}/repos/:owner/:repo/commits/:ref`, guarded(({ params, request }) => {
      const repo = visible(request, p(params, "owner"), p(params, "repo"))
      if (repo instanceof Response) return repo
      if (p(params, "ref") !== (repo.defaultBranch ?? "main")) return HttpResponse.json({ message: "No commit found for SHA" }, { status: 422 })
      const sha = repo.sha ?? HEAD_SHA
      const etag = `"${sha}"`
      if (request.headers.get("if-none-match") === etag) return new HttpResponse(null, { status: 304, headers: { etag } })
      if (request.headers.get("accept") !== "application/vnd.github.sha") return HttpResponse.json({ sha }, { headers: { etag } })
      return new HttpResponse(sha, { headers: { "content-type": "application/vnd.github.sha; charset=utf-8", etag } })
    })),
    http.get(`${API}/repos/:owner/:repo/git/trees/:sha`, guarded(({ params, request }) => {
      const repo = visible(request, p(params, "owner"), p(params, "repo"))
      if (repo instanceof Response) return repo
      const recursive = new URL(request.url).searchParams.get("recursive")
      const tree = (repo.tree ?? []).filter((e) => recursive !== null || !e.path.includes("/"))
      return withEtag(request, {
        sha: p(params, "sha"),
        url: request.url,
        tree: tree.map((e) => ({ path: e.path, mode: e.type === "tree" ? "040000" : "100644", type: e.type, sha: HEAD_SHA, ...(e.type === "blob" ? { size: e.size ?? 0 } : {}), url: "" })),
        truncated: repo.treeTruncated ?? false
      })
    })),
    http.get(`${API}/repos/:owner/:repo/readme`, guarded(({ params, request }) => {
      const repo = visible(request, p(params, "owner"), p(params, "repo"))
      if (repo instanceof Response) return repo
      if (repo.readme === undefined) return notFound()
      const name = repo.readme.path.split("/").pop()!
      return withEtag(request, {
        type: "file",
        encoding: "base64",
        size: Buffer.byteLength(repo.readme.text),
        name,
        path: repo.readme.path,
        content: b64lines(repo.readme.text),
        sha: HEAD_SHA,
        url: `${API}/repos/${repo.owner}/${repo.name}/contents/${repo.readme.path}`,
        html_url: `${WEB}/${repo.owner}/${repo.name}/blob/main/${repo.readme.path}`,
        download_url: `https://raw.githubusercontent.com/${repo.owner}/${repo.name}/main/${repo.readme.path}`
      })
    })),
    http.get(`${API}/repos/:owner/:repo/tarball/:ref`, guarded(({ params, request }) => {
      if (archiveFailure !== null) return archiveFailure()
      const repo = visible(request, p(params, "owner"), p(params, "repo"))
      if (repo instanceof Response) return repo
      return new HttpResponse(null, {
        status: 302,
        headers: { location: `${CODELOAD}/${repo.owner}/${repo.name}/legacy.tar.gz/${p(params, "ref")}?token=ONE-TIME` }
      })
    })),
    http.get(`${CODELOAD}/:owner/:repo/legacy.tar.gz/:ref`, guarded(({ params }) => {
      const repo = repos.get(`${p(params, "owner")}/${p(params, "repo")}`.toLowerCase())
      if (repo?.tarball === undefined) return new HttpResponse("Not Found", { status: 404 })
      return new HttpResponse(repo.tarball, { headers: { "content-type": "application/x-gzip" } })
    })),
    http.get(`${API}/users/:user/repos`, guarded(({ params, request }) => {
      const user = p(params, "user").toLowerCase()
      const owned = [...repos.values()].filter((r) => r.owner.toLowerCase() === user && !r.private)
      if (![...repos.values()].some((r) => r.owner.toLowerCase() === user)) return notFound()
      const url = new URL(request.url)
      const perPage = Number(url.searchParams.get("per_page") ?? "30")
      const page = Number(url.searchParams.get("page") ?? "1")
      const slice = owned.slice((page - 1) * perPage, page * perPage)
      const last = Math.max(1, Math.ceil(owned.length / perPage))
      const link = page < last
        ? { link: `<${API}/user/1/repos?per_page=${perPage}&page=${page + 1}>; rel="next", <${API}/user/1/repos?per_page=${perPage}&page=${last}>; rel="last"` }
        : {}
      return withEtag(request, slice.map(repoJson), link)
    })),
    http.post(`${WEB}/login/oauth/access_token`, guarded(async ({ request }) => {
      const form = new URLSearchParams(await request.text())
      const issued = oauthCodes.get(form.get("code") ?? "")
      if (form.get("client_secret") !== "oauth-client-secret") {
        return HttpResponse.json({ error: "incorrect_client_credentials", error_description: "The client_id and/or client_secret passed are incorrect." })
      }
      if (issued === undefined) {
        return HttpResponse.json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." })
      }
      oauthCodes.delete(form.get("code")!)
      if (issued.redirectUri !== undefined && form.get("redirect_uri") !== issued.redirectUri) {
        return HttpResponse.json({ error: "redirect_uri_mismatch", error_description: "The redirect_uri MUST match the registered callback URL for this application." })
      }
      if (issued.challenge !== undefined) {
        // PKCE (RFC 7636, S256): the verifier must hash to the challenge the authorization was made with.
        const verifier = form.get("code_verifier") ?? ""
        if (createHash("sha256").update(verifier).digest("base64url") !== issued.challenge) {
          return HttpResponse.json({ error: "bad_verification_code", error_description: "The code_verifier does not match the code_challenge." })
        }
        pkceVerified++
      }
      const login = issued.login
      const token = `gho_${createHash("sha256").update(login + Math.random()).digest("hex").slice(0, 36)}`
      oauthTokens.set(token, login)
      return HttpResponse.json({ access_token: token, token_type: "bearer", scope: "" })
    })),
    // GitHub: "Accessing this endpoint does not count against your REST API rate limit." Not recorded in `calls`.
    http.get(`${API}/rate_limit`, () => {
      rateLimitChecks++
      const now = Math.floor(Date.now() / 1000)
      const core = quota !== null
        ? { limit: quota.limit, remaining: quota.remaining, reset: quota.resetEpochSeconds, used: quota.limit - quota.remaining }
        : rateLimited !== null
        ? { limit: 60, remaining: 0, reset: rateLimited.resetEpochSeconds, used: 60 }
        : { limit: 5000, remaining: 5000, reset: now + 3600, used: 0 }
      return HttpResponse.json({ resources: { core }, rate: core })
    }),
    http.get(`${API}/user`, guarded(({ request }) => {
      const login = oauthTokens.get(bearer(request) ?? "")
      return login === undefined ? badCredentials() : HttpResponse.json({ login, id: 583231, type: "User" })
    }))
  ]

  const server = setupServer(...handlers)

  return {
    server,
    calls,
    /** Calls to GitHub's own hosts (not the app under test on loopback). */
    callsTo: (pathPrefix: string) => calls.filter((c) => c.url.pathname.startsWith(pathPrefix)),
    put: (repo: GhRepo) => void repos.set(`${repo.owner}/${repo.name}`.toLowerCase(), repo),
    setRateLimited: (state: { readonly resetEpochSeconds: number } | null) => void (rateLimited = state),
    /** Counts the server credential's primary rate limit from here on (see `quota` above); null stops counting. */
    setQuota: (state: { readonly limit: number; readonly remaining: number; readonly resetEpochSeconds: number } | null) =>
      void (quota = state === null ? null : { ...state }),
    /** What is left of the counted quota. */
    get quotaRemaining() {
      return quota?.remaining ?? null
    },
    /** How often `GET /rate_limit` was asked (it is free, and not in `calls`). */
    get rateLimitChecks() {
      return rateLimitChecks
    },
    /** Makes the tarball endpoint answer this instead of its redirect to codeload (null: the archive again). */
    setArchiveFailure: (answer: (() => Response) | null) => void (archiveFailure = answer),
    /** A code GitHub's authorize page would hand back for this login. */
    issueCode: (code: string, login: string) => void oauthCodes.set(code, { login }),
    /**
     * GitHub's authorize page (`GET <web>/login/oauth/authorize`), approved by `login`: checks the client id,
     * the callback and the PKCE parameters as GitHub does, issues a code bound to that challenge and returns
     * where GitHub redirects the browser (`redirect_uri?code=…&state=…`).
     */
    authorize: (authorizeUrl: string, login: string) => {
      const url = new URL(authorizeUrl)
      if (`${url.origin}${url.pathname}` !== `${WEB}/login/oauth/authorize`) throw new Error(`not GitHub's authorize page: ${url.origin}${url.pathname}`)
      if (url.searchParams.get("client_id") !== "oauth-client-id") throw new Error("unknown client_id")
      const redirectUri = url.searchParams.get("redirect_uri")
      if (redirectUri === null) throw new Error("no redirect_uri")
      const challenge = url.searchParams.get("code_challenge") ?? undefined
      if (challenge !== undefined && url.searchParams.get("code_challenge_method") !== "S256") throw new Error("PKCE method is not S256")
      const code = `code_${createHash("sha256").update(login + Math.random()).digest("hex").slice(0, 20)}`
      oauthCodes.set(code, challenge === undefined ? { login, redirectUri } : { login, challenge, redirectUri })
      const back = new URL(redirectUri)
      back.searchParams.set("code", code)
      back.searchParams.set("state", url.searchParams.get("state") ?? "")
      return back
    },
    /** How many token exchanges passed a PKCE check. */
    get pkceVerified() {
      return pkceVerified
    },
    reset: () => {
      calls.length = 0
      rateLimited = null
      quota = null
      archiveFailure = null
      rateLimitChecks = 0
      pkceVerified = 0
    }
  }
}

export type FakeGithub = ReturnType<typeof makeFakeGithub>

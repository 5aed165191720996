import { Clock, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { CodeHostIdentity, CodeHostIdentityError, identityNotConfigured } from "../../ports/CodeHostIdentity.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { USER_AGENT } from "./GithubClient.js"
import { githubEndpoints, githubOAuthApp } from "./GithubConfig.js"
import { isRateLimit, retryAfterSeconds } from "./GithubErrors.js"
import { UserJson } from "./GithubShapes.js"

const TIMEOUT_MS = 15_000

/** The token endpoint's JSON answer: a token, or an OAuth error (GitHub answers those with 200). */
const TokenJson = Schema.Struct({
  access_token: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
})

/** `GET /repos/{owner}/{repo}` as an authenticated user sees it: that user's permissions on the repo. */
const RepoPermissionsJson = Schema.Struct({
  permissions: Schema.optional(Schema.Struct({ admin: Schema.optional(Schema.Boolean) }))
})

/** RFC 7636 S256: base64url(SHA-256(verifier)), what goes into the authorize URL instead of the verifier. */
const s256 = (verifier: Redacted.Redacted<string>) => createHash("sha256").update(Redacted.value(verifier)).digest("base64url")

const failure = (reason: CodeHostIdentityError["reason"], message: string, retry?: number) =>
  new CodeHostIdentityError(retry === undefined ? { reason, message } : { reason, message, retryAfterSeconds: retry })

const NOT_CONFIGURED = "The code-host connection is off: the operator has not set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET."

const call = (url: string, init: RequestInit) =>
  Effect.tryPromise({
    try: async () => {
      const res = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) })
      const text = await res.text()
      let json: unknown = null
      try {
        json = JSON.parse(text)
      } catch {
        json = null
      }
      return { status: res.status, headers: Object.fromEntries(res.headers) as Record<string, string>, json }
    },
    catch: () => failure("unavailable", "The code host did not answer.")
  })

/** A non-2xx answer: a rate limit carries its wait; anything else is an outage. */
const outage = (answer: { status: number; headers: Record<string, string>; json: unknown }) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const f = {
      status: answer.status,
      headers: answer.headers,
      hostMessage: String((answer.json as { message?: unknown } | null)?.message ?? "")
    }
    return Effect.fail(
      isRateLimit(f)
        ? failure("unavailable", "The code host's rate limit was reached.", retryAfterSeconds(f, now))
        : failure("unavailable", `The code host answered HTTP ${answer.status}.`)
    )
  })

/**
 * The code-host connection over GitHub's OAuth web flow (`GITHUB_CLIENT_ID`, `GITHUB_CLIENT_SECRET`).
 * - authorize: `<web>/login/oauth/authorize` with no scope (public data is all we read),
 *   `prompt=select_account` (GitHub always shows its account picker, so an authorization never completes
 *   silently in a browser that merely opened a link), `redirect_uri` = `<BASE_URL>/auth/host/callback`, and
 *   PKCE (`code_challenge` = S256 of the flow's verifier, `code_challenge_method=S256`);
 * - exchange: POST `<web>/login/oauth/access_token` with the `code_verifier`, then `GET <api>/user` with the
 *   token; the token goes back to the use case as a Redacted value, to be sealed, never logged or shown;
 * - controls: `GET <api>/repos/{owner}/{repo}` with the user's token; GitHub answers an authenticated user with
 *   `permissions` (no scope needed for a public repo), and `permissions.admin` is proof of control: a user's own
 *   repos, the repos they administer, every repo of an organisation they own. A private repo is invisible to a
 *   token without the `repo` scope (which we never ask for), so it answers false.
 */
export const CodeHostIdentityGithub = Layer.effect(
  CodeHostIdentity,
  Effect.gen(function*() {
    const app = yield* githubOAuthApp
    const endpoints = yield* githubEndpoints
    const { baseUrl } = yield* PublicOrigin
    if (Option.isNone(app)) {
      return identityNotConfigured(NOT_CONFIGURED)
    }
    const { clientId, clientSecret } = app.value
    const redirectUri = `${baseUrl}/auth/host/callback`

    const authorizeUrl = (state: string, proofKey: Redacted.Redacted<string>) =>
      Effect.sync(() => {
        const url = new URL(`${endpoints.webUrl}/login/oauth/authorize`)
        url.search = new URLSearchParams({
          client_id: clientId,
          redirect_uri: redirectUri,
          state,
          code_challenge: s256(proofKey),
          code_challenge_method: "S256",
          prompt: "select_account",
          allow_signup: "false"
        }).toString()
        return url.href
      })

    const accessToken = (code: Redacted.Redacted<string>, proofKey: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const answer = yield* call(`${endpoints.webUrl}/login/oauth/access_token`, {
          method: "POST",
          headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded", "user-agent": USER_AGENT },
          body: new URLSearchParams({
            client_id: clientId,
            client_secret: Redacted.value(clientSecret),
            code: Redacted.value(code),
            code_verifier: Redacted.value(proofKey),
            redirect_uri: redirectUri
          }).toString()
        })
        if (answer.status < 200 || answer.status > 299) return yield* outage(answer)
        const json = yield* Schema.decodeUnknown(TokenJson)(answer.json).pipe(
          Effect.mapError(() => failure("unavailable", "The code host gave an unexpected answer to the code exchange."))
        )
        if (json.access_token !== undefined && json.access_token !== "") return Redacted.make(json.access_token)
        if (json.error === "bad_verification_code" || json.error === "incorrect_code_verifier") {
          return yield* failure("code_rejected", "The code host refused the code (expired or already used).")
        }
        // A wrong client secret or callback URL is the operator's to fix; the error code holds no secret.
        yield* Effect.logWarning(`The GitHub OAuth code exchange failed: ${json.error ?? "no token in the answer"}`)
        return yield* failure("unavailable", "The code host refused this server's OAuth app.")
      })

    const asUser = (token: Redacted.Redacted<string>) => ({
      accept: "application/vnd.github+json",
      authorization: `Bearer ${Redacted.value(token)}`,
      "user-agent": USER_AGENT,
      "x-github-api-version": "2022-11-28"
    })

    const loginOf = (token: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const answer = yield* call(`${endpoints.apiUrl}/user`, { headers: asUser(token) })
        if (answer.status === 401) return yield* failure("code_rejected", "The code host refused the token it just issued.")
        if (answer.status !== 200) return yield* outage(answer)
        const user = yield* Schema.decodeUnknown(UserJson)(answer.json).pipe(
          Effect.mapError(() => failure("unavailable", "The code host gave an unexpected answer for the user."))
        )
        return { login: user.login, token }
      })

    const controls = (token: Redacted.Redacted<string>, repo: { readonly owner: string; readonly name: string }) =>
      Effect.gen(function*() {
        const path = `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`
        const answer = yield* call(`${endpoints.apiUrl}${path}`, { headers: asUser(token) })
        // Revoked token (401), or a repo this token cannot see (404; 403 for an organisation that restricts
        // OAuth apps and has not approved ours): no proof.
        if (answer.status === 401 || answer.status === 404) return false
        if (answer.status === 403 && !isRateLimit({ status: 403, headers: answer.headers, hostMessage: String((answer.json as { message?: unknown } | null)?.message ?? "") })) return false
        if (answer.status !== 200) return yield* outage(answer)
        const json = yield* Schema.decodeUnknown(RepoPermissionsJson)(answer.json).pipe(
          Effect.mapError(() => failure("unavailable", "The code host gave an unexpected answer for the repository."))
        )
        return json.permissions?.admin === true
      })

    return {
      configured: true,
      authorizeOrigin: new URL(endpoints.webUrl).origin,
      authorizeUrl,
      exchange: (code, proofKey) => Effect.flatMap(accessToken(code, proofKey), loginOf),
      controls
    }
  })
)

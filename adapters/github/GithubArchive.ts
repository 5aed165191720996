import { Clock, Effect, type Option, type Redacted, Stream } from "effect"
import type { RepoRef } from "../../domain/Ids.js"
import { CodeHostError } from "../../ports/CodeHost.js"
import { authorizationFor, type GithubTuning, USER_AGENT } from "./GithubClient.js"
import type { GithubEndpoints } from "./GithubConfig.js"
import { toCodeHostError } from "./GithubErrors.js"
import { type QuotaMeter, readingOf } from "./Quota.js"

/** Of an error body, only this much is read (to recognise a rate-limit message). */
const MAX_ERROR_BODY_BYTES = 16 * 1024

const unavailable = (message: string) => new CodeHostError({ reason: "unavailable", message })

/** Whether `url` is under the API base (same origin, same path prefix): only there may a token go. */
export const isUnderApi = (url: string, apiUrl: string): boolean => {
  const target = new URL(url)
  const api = new URL(apiUrl)
  if (target.origin !== api.origin) return false
  const prefix = api.pathname.replace(/\/+$/, "")
  return prefix === "" || target.pathname === prefix || target.pathname.startsWith(`${prefix}/`)
}

const headersOf = (res: Response): Record<string, string> => Object.fromEntries(res.headers)

const readSmallText = async (res: Response): Promise<string> => {
  if (res.body === null) return ""
  const reader = res.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    while (size < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES))
}

const hostMessageOf = (text: string): string => {
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    return typeof parsed.message === "string" ? parsed.message : ""
  } catch {
    return ""
  }
}

/**
 * The tarball of one commit, streamed straight from the code host. Octokit buffers whole responses, so this
 * uses fetch: `GET <api>/repos/{owner}/{repo}/tarball/{sha}` answers with a redirect to codeload. Redirects are
 * followed by hand so the Authorization header goes only to the API base, never to another host. The body is
 * never held whole: each chunk is pulled as the consumer asks for it, and interrupting the stream aborts the
 * download.
 */
export const archiveStream = (
  endpoints: GithubEndpoints,
  serverToken: Option.Option<Redacted.Redacted<string>>,
  tuning: GithubTuning,
  quota: QuotaMeter,
  ref: RepoRef,
  commitSha: string,
  token: Option.Option<Redacted.Redacted<string>>
): Stream.Stream<Uint8Array, CodeHostError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const { credential, header } = authorizationFor(token, serverToken)
    const controller = yield* Effect.acquireRelease(
      Effect.sync(() => new AbortController()),
      (c) => Effect.sync(() => c.abort())
    )
    const path = [ref.owner, ref.name].map(encodeURIComponent).join("/")
    let url = `${endpoints.apiUrl}/repos/${path}/tarball/${encodeURIComponent(commitSha)}`
    for (let hop = 0; ; hop++) {
      const toApi = isUnderApi(url, endpoints.apiUrl)
      const target = url
      // The API's answer (the redirect) counts against the server's quota unless a listing's token is sent.
      const shared = toApi && credential !== "listing"
      const answered = shared ? quota.sent() : () => undefined
      const res = yield* Effect.tryPromise({
        try: () =>
          fetch(target, {
            headers: {
              "user-agent": USER_AGENT,
              ...(toApi ? { ...header, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" } : {})
            },
            redirect: "manual",
            signal: controller.signal
          }),
        catch: () => unavailable("The code host did not answer.")
      }).pipe(
        // Only the wait for the answer's headers is bounded; the body may take as long as it streams.
        Effect.timeoutFail({
          duration: tuning.requestTimeoutMs,
          onTimeout: () => unavailable("The code host did not answer in time.")
        }),
        Effect.ensuring(Effect.sync(answered))
      )
      if (shared) quota.observe(readingOf(headersOf(res)))
      if (res.status >= 300 && res.status < 400 && res.headers.get("location")) {
        yield* Effect.promise(() => res.body?.cancel().catch(() => undefined) ?? Promise.resolve())
        if (hop >= tuning.maxArchiveRedirects) return yield* unavailable("The code host redirected the archive too often.")
        url = new URL(res.headers.get("location")!, target).href
        if (!/^https?:$/.test(new URL(url).protocol)) return yield* unavailable("The code host redirected the archive elsewhere.")
        continue
      }
      if (res.status === 200 && res.body !== null) {
        const body = res.body
        return Stream.fromReadableStream({
          evaluate: () => body,
          onError: () => unavailable("The archive download broke off.")
        })
      }
      const text = yield* Effect.promise(() => readSmallText(res).catch(() => ""))
      const now = yield* Clock.currentTimeMillis
      return yield* toCodeHostError(
        { status: res.status, headers: headersOf(res), hostMessage: hostMessageOf(text) },
        toApi ? credential : "none",
        "repository",
        now
      )
    }
  }))

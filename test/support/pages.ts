import { expect } from "@effect/vitest"
import { Effect, Layer, Option, type Redacted } from "effect"
import { readmeRenderer } from "../../adapters/github/ReadmeHtml.js"
import { ReadmePackagesModule } from "../../adapters/LazyModules.js"
import { CodeHostMemory, type FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { HttpLive } from "../../app/AppLayer.js"
import { CodeHost, type RepoInfo } from "../../ports/CodeHost.js"
import { call, type Reply, ServedAsNpmStart, type TestAppOptions, testPorts } from "./app.js"
import { magicToken } from "./flows.js"

/**
 * The HTML side of the app as a browser drives it, over plain HTTP: a browser's Accept header, urlencoded
 * form posts, the session cookie and the dashboard's CSRF token.
 */

/** What Chromium sends for a navigation. */
export const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

export const htmlGet = (path: string, cookie?: string, headers: Record<string, string> = {}) =>
  call("GET", path, { headers: { accept: BROWSER_ACCEPT, ...(cookie === undefined ? {} : { cookie }), ...headers } })

export const formPost = (path: string, fields: Record<string, string>, cookie?: string, headers: Record<string, string> = {}) =>
  call("POST", path, {
    raw: new URLSearchParams(fields).toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: BROWSER_ACCEPT,
      ...(cookie === undefined ? {} : { cookie }),
      ...headers
    }
  })

/** Asserts an HTML page with the pages' security headers; returns its text. */
export const expectPage = (reply: Reply, status: number) => {
  expect({ status: reply.status, type: reply.headers["content-type"] }, reply.text.slice(0, 400)).toEqual({ status, type: "text/html; charset=utf-8" })
  const csp = reply.headers["content-security-policy"] ?? ""
  expect(csp).toContain("default-src 'none'")
  expect(csp).toMatch(/script-src ('none'|'nonce-[A-Za-z0-9_-]+');/)
  expect(csp).not.toContain("unsafe-inline")
  expect(csp).not.toMatch(/https?:/)
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.text).not.toMatch(/\n\s+at .+:\d+:\d+/) // never a stack trace
  return reply.text
}

/** Asserts a 303 to `location`; returns the reply. */
export const expectSeeOther = (reply: Reply, location: string) => {
  expect({ status: reply.status, location: reply.headers["location"] }).toEqual({ status: 303, location })
  return reply
}

/** The `name=value` of the session cookie a response sets. */
export const sessionCookieOf = (reply: Reply): string => {
  const set = reply.headers["set-cookie"] ?? ""
  const match = /^((?:__Host-)?rm_session=[^;]*)/.exec(set)
  expect(match, `a session cookie in ${set}`).not.toBeNull()
  return match![1]!
}

/** Signs in as a browser does: the emailed token posted by the confirm page's form; returns the cookie. */
export const browserSignIn = (email: string) =>
  Effect.gen(function*() {
    const token = yield* magicToken(email)
    const reply = expectSeeOther(yield* formPost("/auth/verify", { token }), "/dashboard")
    return { cookie: sessionCookieOf(reply), setCookie: reply.headers["set-cookie"]! }
  })

/** The CSRF token the dashboard embeds in its forms. */
export const csrfOf = (page: string): string => {
  const match = /name="csrf" value="([0-9a-f]+)"/.exec(page)
  expect(match, "a csrf field").not.toBeNull()
  return match![1]!
}

/** The dashboard and its CSRF token for a session cookie. */
export const dashboardOf = (cookie: string) =>
  Effect.map(htmlGet("/dashboard", cookie), (reply) => {
    const text = expectPage(reply, 200)
    return { text, csrf: csrfOf(text) }
  })

/**
 * The in-memory code host with its README HTML replaced: `render` gets the markdown and the repo, as the
 * GitHub adapter's renderer does. Used to put the real sanitiser, or a simulated sanitiser miss, on a page.
 */
export const codeHostWithReadme = (
  repos: ReadonlyArray<FakeRepo>,
  render: (markdown: string, repo: RepoInfo, path: string) => string
) =>
  Layer.effect(
    CodeHost,
    Effect.map(CodeHost, (host) => ({
      ...host,
      readme: (repo: RepoInfo, token: Option.Option<Redacted.Redacted<string>>) =>
        Effect.map(host.readme(repo, token), Option.map((r) => ({ ...r, html: render(r.markdown, repo, r.path) })))
    }))
  ).pipe(Layer.provide(CodeHostMemory(repos)))

const renderReadme = readmeRenderer(await ReadmePackagesModule.defaultValue()())

/** The GitHub adapter's README renderer (marked + sanitize-html), as production runs it. */
export const sanitisedReadme = (markdown: string, repo: RepoInfo, path: string) =>
  renderReadme(markdown, { htmlUrl: repo.htmlUrl, branch: repo.defaultBranch, path })

/** `TestApp` with some ports replaced (a decorated code host, an https BASE_URL). */
export const TestAppWith = <ROut>(overrides: Layer.Layer<ROut, unknown>, options: TestAppOptions = {}) =>
  HttpLive.pipe(Layer.provideMerge(Layer.merge(testPorts(options), overrides)), Layer.provideMerge(ServedAsNpmStart()))

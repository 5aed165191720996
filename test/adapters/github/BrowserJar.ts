import { Effect } from "effect"
import { expect } from "vitest"
import { BASE_URL, call, type Reply } from "../../support/app.js"

/**
 * A browser as far as the code-host connection can tell over HTTP: a cookie jar (what `Set-Cookie` put in
 * it, sent back on every request), `Accept: text/html`, and the `Origin`/`Sec-Fetch-Site` a browser sends for
 * a form posted from our own pages, or for a navigation that comes from GitHub.
 */
export interface Browser {
  readonly cookies: Map<string, string>
  /** Every `Set-Cookie` line the browser received, for attribute checks. */
  readonly setCookies: Array<string>
}

export const newBrowser = (session?: string): Browser => {
  const cookies = new Map<string, string>()
  if (session !== undefined) cookies.set("rm_session", session)
  return { cookies, setCookies: [] }
}

/** Splits a joined `Set-Cookie` header (`a=1; Path=/, b=2`) without breaking on the comma inside `Expires`. */
const splitSetCookie = (joined: string | undefined) => (joined === undefined || joined === "" ? [] : joined.split(/,\s*(?=[^;,\s]+=)/))

const absorb = (browser: Browser, reply: Reply) => {
  for (const line of splitSetCookie(reply.headers["set-cookie"])) {
    browser.setCookies.push(line)
    const [pair, ...attributes] = line.split(";")
    const eq = pair!.indexOf("=")
    const name = pair!.slice(0, eq).trim()
    const value = pair!.slice(eq + 1).trim()
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))
    if (expired || value === "") browser.cookies.delete(name)
    else browser.cookies.set(name, value)
  }
  return reply
}

const cookieHeader = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")

/** A top-level navigation (`GET`); `from` is where the browser comes from (our own pages or another site). */
export const navigate = (browser: Browser, pathOrUrl: string, from: "same-origin" | "cross-site" = "same-origin") => {
  const url = new URL(pathOrUrl, BASE_URL)
  if (url.origin !== BASE_URL) throw new Error(`not our origin: ${url.href}`)
  const headers: Record<string, string> = { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8", "sec-fetch-site": from, "sec-fetch-mode": "navigate" }
  if (browser.cookies.size > 0) headers["cookie"] = cookieHeader(browser)
  return Effect.map(call("GET", `${url.pathname}${url.search}`, { headers }), (reply) => absorb(browser, reply))
}

/** A form on one of our pages, submitted (urlencoded POST, same origin). */
export const submit = (browser: Browser, path: string, fields: Record<string, string>) => {
  const headers: Record<string, string> = {
    accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
    "content-type": "application/x-www-form-urlencoded",
    origin: BASE_URL,
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate"
  }
  if (browser.cookies.size > 0) headers["cookie"] = cookieHeader(browser)
  return Effect.map(call("POST", path, { raw: new URLSearchParams(fields).toString(), headers }), (reply) => absorb(browser, reply))
}

/** The hidden fields of the first form on a page posting to `action`, or undefined when the page has none. */
export const formFields = (page: string, action: string): Record<string, string> | undefined => {
  const forms = page.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? []
  const form = forms.find((f) => new RegExp(`action="${action.replace(/[/.]/g, "\\$&")}"`).test(f))
  if (form === undefined) return undefined
  const fields: Record<string, string> = {}
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1]!] = m[2]!.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
  }
  return fields
}

/**
 * Presses "Connect GitHub" on the dashboard: the CSRF-checked POST that starts the connection. Returns the
 * reply (a 303 to GitHub's authorize page when it worked), or undefined when the dashboard offers no such form.
 */
export const pressConnect = (browser: Browser) =>
  Effect.gen(function*() {
    const dashboard = yield* navigate(browser, "/dashboard")
    const fields = formFields(dashboard.text, "/auth/host/start")
    if (fields === undefined) return undefined
    return yield* submit(browser, "/auth/host/start", fields)
  })

/** GitHub redirected the browser back: the callback, as a cross-site navigation from github.com. */
export const returnFromGithub = (browser: Browser, callbackUrl: URL) => navigate(browser, callbackUrl.href, "cross-site")

/** Presses the confirmation page's "Connect" button; undefined when the page offers none. */
export const pressConfirm = (browser: Browser, page: Reply) =>
  Effect.gen(function*() {
    const fields = formFields(page.text, "/auth/host/confirm")
    if (fields === undefined) return undefined
    return yield* submit(browser, "/auth/host/confirm", fields)
  })

export const expectStatus = (reply: Reply | undefined, status: number) => {
  expect(reply, "no reply").toBeDefined()
  expect(reply!.status, reply!.text.slice(0, 500)).toBe(status)
  return reply!
}

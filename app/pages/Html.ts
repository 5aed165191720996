import { HttpServerResponse } from "@effect/platform"
import { randomBytes } from "node:crypto"
import { escapeHtml } from "../../codec/EscapeHtml.js"
export { escapeHtml }

/**
 * HTML that is safe by construction. Page code builds markup only with the `html` tagged template: every
 * interpolated value is escaped unless it is already `Html` (built by `html` itself). The one way around
 * escaping is `trustedHtml`, for markup an adapter has sanitised (the README); the Content-Security-Policy
 * below keeps even a sanitiser miss inert.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

export type Interpolation = Html | string | number | bigint | boolean | null | undefined | ReadonlyArray<Interpolation>

const render = (value: Interpolation): string => {
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join("")
  if (value === null || value === undefined || value === false || value === true) return ""
  return escapeHtml(String(value))
}

/** The tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested `html` fragments and arrays pass through. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** Markup that an adapter already sanitised (the rendered README). Never use it for anything else. */
export const trustedHtml = (sanitised: string): Html => new Html(sanitised)

/** A link target from outside (the code host): only http(s) URLs and our own paths, else an inert `#`. */
export const safeHref = (url: string | null | undefined): string => {
  if (url == null) return "#"
  if (url.startsWith("/") && !url.startsWith("//")) return url
  return /^https?:\/\//i.test(url) ? url : "#"
}

/** A fresh nonce for the one script a page may load. */
export const newNonce = (): string => randomBytes(18).toString("base64url")

/**
 * The policy of every page: nothing from other origins, no inline script, no eval, our own stylesheet, form
 * posts only to ourselves, no framing. A page that loads our progressive script names it by nonce.
 */
export const contentSecurityPolicy = (nonce?: string, formTargets: ReadonlyArray<string> = []): string =>
  [
    "default-src 'none'",
    nonce === undefined ? "script-src 'none'" : `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    ["form-action 'self'", ...formTargets].join(" "),
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'"
  ].join("; ")

/** The policy without a script: kept for callers of the first sign-in page. */
export const PAGE_CSP = contentSecurityPolicy()

export interface LayoutOptions {
  readonly title: string
  readonly main: Html
  /** Loads the progressive script (copy buttons) under this nonce. */
  readonly nonce?: string | undefined
  /** Shown in the header when a seller is signed in. */
  readonly signedInAs?: string | undefined
  /** More `<head>` content: link-preview meta and structured data (the repo page). */
  readonly head?: Html | undefined
}

export const layout = (o: LayoutOptions): Html => html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · repomarket</title>
<link rel="stylesheet" href="/assets/site.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${o.head}
${o.nonce === undefined ? "" : html`<script src="/assets/copy.js" nonce="${o.nonce}" defer></script>`}
</head><body>
<header class="top"><a class="brand" href="/">repomarket</a><nav>${
  o.signedInAs === undefined
    ? html`<a href="/signin">Sign in</a>`
    : html`<span class="who">${o.signedInAs}</span> <a href="/signout">Sign out</a>`
}</nav></header>
<main>${o.main}</main>
<footer><p>Repositories sold over <a href="https://x402.org">x402</a>, paid in USDC on Base or Solana.</p></footer>
</body></html>`

export interface PageResponseOptions {
  readonly status?: number
  readonly nonce?: string | undefined
  /** Public pages are the same for everyone; anything with a session or a token in it is never stored. */
  readonly cache?: "no-store" | "no-cache"
  /**
   * `strict-origin` where the URL holds a token (the sign-in link): only the origin ever leaves, and the
   * browser still names it in `Origin`. Else `same-origin`: only our own origin sees the URL.
   */
  readonly referrer?: "no-referrer" | "strict-origin" | "same-origin"
  readonly headers?: Record<string, string>
  /**
   * Origins a form on the page may end up at besides ours: browsers apply `form-action` to the redirects a
   * form post leads to, and "Connect GitHub" posts to us and is redirected to GitHub's authorize page.
   */
  readonly formTargets?: ReadonlyArray<string>
}

/** An HTML response with the security headers every page carries. */
export const htmlResponse = (document: Html, o: PageResponseOptions = {}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(document.value, {
    status: o.status ?? 200,
    contentType: "text/html; charset=utf-8",
    headers: {
      "content-security-policy": contentSecurityPolicy(o.nonce, o.formTargets),
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": o.referrer ?? "same-origin",
      "cache-control": o.cache ?? "no-store",
      ...o.headers
    }
  })

/** A short amount for people: `$12.34`. */
export const dollars = (usd: string | null): string => (usd === null ? "not priced" : `$${usd}`)

/** A listing's update window in words, as the repo page and the dashboard show it. */
export const updatesWords = (days: number): string =>
  days === 0 ? "No updates after purchase" : `Updates: ${days} day${days === 1 ? "" : "s"} after purchase`

/** A compact date and time in UTC. */
export const when = (d: Date | null): string => (d === null ? "—" : d.toISOString().slice(0, 16).replace("T", " ") + " UTC")

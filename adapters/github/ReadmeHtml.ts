import type sanitizeHtml from "sanitize-html"
import { escapeHtml } from "../../codec/EscapeHtml.js"
import type { ReadmePackages } from "../LazyModules.js"

/**
 * README rendering for the free preview. Markdown goes through `marked` (GFM), then everything through
 * `sanitize-html` with an allow-list, because a README is attacker-controlled HTML shown on our pages:
 * - no script, style, iframe, object, embed, form or svg; no event-handler or style attributes;
 * - links only http, https and mailto (plus in-page `#anchors`); images only https; no data: URLs;
 * - relative links resolve to the repo on the code host (`<repo>/blob/<branch>/...`), relative images to
 *   `<repo>/raw/<branch>/...` (dropped if that is not https); anything unresolvable is dropped.
 */
export interface ReadmeContext {
  /** The repo's page on the code host, e.g. `https://github.com/octo/widget`. */
  readonly htmlUrl: string
  readonly branch: string
  /** The README's path in the repo, e.g. `docs/README.md`; relative links are relative to its directory. */
  readonly path: string
}

const MARKDOWN_PATH = /\.(md|markdown|mdown|mkdn|mkd|mdwn|mdx)$/i

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/")

const LINK_SCHEMES = new Set(["http:", "https:", "mailto:"])

/** An absolute URL for `href` as GitHub would resolve it inside the README, or null to drop it. */
export const resolveReadmeUrl = (href: string, ctx: ReadmeContext, kind: "link" | "image"): string | null => {
  const value = href.trim()
  if (value === "") return null
  if (value.startsWith("#")) return kind === "link" ? value : null
  let absolute: URL | null = null
  try {
    absolute = new URL(value)
  } catch {
    // Relative: against the README's directory, or the repo root for a leading "/".
    const mode = kind === "link" ? "blob" : "raw"
    const dir = ctx.path.includes("/") ? ctx.path.slice(0, ctx.path.lastIndexOf("/") + 1) : ""
    const root = `${ctx.htmlUrl.replace(/\/+$/, "")}/${mode}/${encodePath(ctx.branch)}/`
    const protocolRelative = value.startsWith("//")
    try {
      absolute = protocolRelative
        ? null
        : value.startsWith("/")
        ? new URL(value.replace(/^\/+/, ""), root)
        : new URL(value, root + encodePath(dir))
    } catch {
      absolute = null
    }
  }
  if (absolute === null) return null
  if (kind === "image") return absolute.protocol === "https:" ? absolute.href : null
  return LINK_SCHEMES.has(absolute.protocol) ? absolute.href : null
}

const sanitizeOptions = (ctx: ReadmeContext): sanitizeHtml.IOptions => ({
  allowedTags: [
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "code", "kbd", "samp", "var",
    "em", "strong", "b", "i", "u", "s", "strike", "del", "ins", "mark", "sub", "sup", "small", "abbr",
    "ul", "ol", "li", "dl", "dt", "dd", "a", "img", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "details", "summary", "div", "span", "input"
  ],
  allowedAttributes: {
    a: ["href", "title", "rel"],
    img: ["src", "alt", "title", "width", "height"],
    th: ["align", "colspan", "rowspan"],
    td: ["align", "colspan", "rowspan"],
    ol: ["start"],
    code: ["class"],
    abbr: ["title"],
    details: ["open"],
    // GFM task lists render disabled checkboxes; nothing else of a form survives.
    input: ["type", "checked", "disabled"]
  },
  allowedClasses: { code: ["language-*"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesByTag: { img: ["https"] },
  allowedSchemesAppliedToAttributes: ["href", "src"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  nonTextTags: ["script", "style", "textarea", "option", "noscript", "template", "title"],
  transformTags: {
    a: (tagName, attribs) => {
      const href = attribs["href"] === undefined ? null : resolveReadmeUrl(attribs["href"], ctx, "link")
      const { href: _dropped, ...rest } = attribs
      return {
        tagName,
        attribs: href === null ? rest : { ...rest, href, ...(href.startsWith("#") ? {} : { rel: "nofollow noopener noreferrer" }) }
      }
    },
    img: (tagName, attribs) => {
      const src = attribs["src"] === undefined ? null : resolveReadmeUrl(attribs["src"], ctx, "image")
      const { src: _dropped, ...rest } = attribs
      return { tagName, attribs: src === null ? rest : { ...rest, src } }
    },
    input: (tagName, attribs) => ({
      tagName,
      attribs: attribs["type"]?.toLowerCase() === "checkbox"
        ? { type: "checkbox", disabled: "", ...(attribs["checked"] !== undefined ? { checked: "" } : {}) }
        : { type: "other" }
    })
  },
  // An image without a usable source, or an input that is not a checkbox, is dropped entirely.
  exclusiveFilter: (frame) =>
    (frame.tag === "img" && !frame.attribs["src"]) || (frame.tag === "input" && frame.attribs["type"] !== "checkbox")
})

/** Renders a README as safe HTML (see above). */
export type RenderReadme = (text: string, ctx: ReadmeContext) => string

/**
 * The renderer over the loaded packages (adapters/LazyModules.ts loads them on first use, so a cold start does
 * not parse them). Markdown READMEs are rendered; any other README (`.rst`, `.txt`, none) is shown as
 * preformatted text.
 */
export const readmeRenderer = (packages: ReadmePackages): RenderReadme => {
  const markdown = new packages.Marked({ gfm: true, breaks: false })
  return (text, ctx) => {
    let html: string
    try {
      html = MARKDOWN_PATH.test(ctx.path) ? markdown.parse(text, { async: false }) : `<pre>${escapeHtml(text)}</pre>`
    } catch {
      html = `<pre>${escapeHtml(text)}</pre>`
    }
    return packages.sanitizeHtml(html, sanitizeOptions(ctx))
  }
}

/** At most `maxBytes` of UTF-8 text, cut on a character boundary. */
export const clipUtf8 = (bytes: Uint8Array, maxBytes: number): string => {
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, maxBytes))
  // A multi-byte character cut in half decodes to U+FFFD at the very end: drop it.
  return bytes.length > maxBytes ? decoded.replace(/\uFFFD$/, "") : decoded
}

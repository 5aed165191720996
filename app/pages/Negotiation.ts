/**
 * Content negotiation for the public pages: the same URL answers JSON to agents and HTML to browsers.
 * HTML only when the Accept header rates `text/html` strictly above `application/json`; an absent header,
 * `*\/*` or a tie keeps JSON, the contract's answer.
 */
interface Range {
  readonly type: string
  readonly subtype: string
  readonly q: number
}

const parse = (accept: string): ReadonlyArray<Range> =>
  accept.split(",").flatMap((part) => {
    const [media, ...params] = part.trim().split(";")
    const [type, subtype] = (media ?? "").trim().toLowerCase().split("/")
    if (!type || !subtype) return []
    let q = 1
    for (const p of params) {
      const [k, v] = p.trim().split("=")
      if (k?.trim().toLowerCase() === "q") {
        const n = Number(v)
        q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0
      }
    }
    return [{ type, subtype, q }]
  })

/** The quality the client gives a media type: that of the most specific range matching it. */
const quality = (ranges: ReadonlyArray<Range>, media: string): number => {
  const [type, subtype] = media.split("/")
  let best = -1
  let q = 0
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === "*" ? 1 : r.type === "*" && r.subtype === "*" ? 0 : -1
    if (specificity > best) {
      best = specificity
      q = r.q
    }
  }
  return q
}

export const prefersHtml = (accept: string | undefined): boolean => {
  if (accept === undefined || accept.trim() === "") return false
  const ranges = parse(accept)
  const htmlQ = Math.max(quality(ranges, "text/html"), quality(ranges, "application/xhtml+xml"))
  return htmlQ > 0 && htmlQ > quality(ranges, "application/json")
}

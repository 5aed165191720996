/**
 * What the access log may say about a request's target. Secrets travel in URLs in three places: the receipt
 * link (`/downloads/<token>`, bearer access to paid goods for 7 days), the sign-in link
 * (`/auth/verify?token=`) and GitHub's OAuth redirect (`/auth/host/callback?code=&state=`). The log keeps
 * the path without its query string, with every segment after `downloads` replaced, so no spelling of a
 * receipt path (trailing slash, percent-encoding, case) carries its token into a log line.
 */
const SECRET_PATH_PREFIXES = new Set(["downloads"])

const REDACTED = "[redacted]"

const decoded = (segment: string): string => {
  try {
    return decodeURIComponent(segment).toLowerCase()
  } catch {
    return segment.toLowerCase()
  }
}

/** The request target as the access log writes it: no query, no fragment, secret path segments redacted. */
export const loggablePath = (url: string): string => {
  const path = url.split(/[?#]/, 1)[0] ?? ""
  const segments = path.split("/")
  const at = segments.findIndex((s) => SECRET_PATH_PREFIXES.has(decoded(s)))
  if (at < 0) return path
  return [...segments.slice(0, at + 1), ...segments.slice(at + 1).map((s) => (s === "" ? s : REDACTED))].join("/")
}

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { Cookies, type HttpServerResponse } from "@effect/platform"
import { loggablePath } from "../AccessLog.js"
import { prefersHtml } from "../pages/Negotiation.js"
import { requestIdSuffix } from "../RequestId.js"

/*
 * The front door: the two answers every buyer and agent asks for first — a listing's repo page as JSON and
 * a checkout's 402 challenge — served from memory by the Node server itself, before a request ever reaches
 * the Effect app. What it serves is exactly what the app answered for the same request a moment ago
 * (status, headers and bytes, remembered on the way out), so the two paths cannot disagree.
 *
 * How long an answer may be served:
 * - a write to listings or accounts through this process (any store method that is not a read, and the end
 *   of every transaction) forgets every remembered answer at once, so a seller's change is visible on the
 *   next request, here;
 * - an answer computed while such a write ran is never remembered (the generation moved on meanwhile);
 * - every answer expires after `RESPONSE_CACHE_MS` (default 2 000 ms): the bound on what another instance
 *   writing to the same database can leave stale. Paying never goes through here: a payment made against a
 *   stale 402 is checked against the current listing by the app and refused with a fresh 402.
 *
 * Only `GET` without a query string or body; the repo page only when it negotiates JSON (the HTML page
 * carries a fresh CSP nonce on every answer); the checkout only without a payment or sign-in header and only when
 * it negotiates the x402 answer (not the browser's checkout page); only the expected
 * statuses (200, 402). Everything else goes to the app.
 */

export interface FrontDoorOptions {
  /** How long a remembered answer is served; 0 turns the front door off. */
  readonly ttlMs: number
  /** At most this many answers (the oldest go first). */
  readonly maxEntries: number
  /** At most this many body bytes in all. */
  readonly maxBytes: number
  /** One access-log line per answer served here, as the app's guard writes for the others. */
  readonly log?: (line: string) => void
  /** The clock (milliseconds); tests may pass their own. */
  readonly now?: () => number
}

interface Entry {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly expires: number
}

export interface FrontDoorStats {
  readonly hits: number
  readonly remembered: number
  readonly forgotten: number
  readonly entries: number
  readonly bytes: number
}

export interface FrontDoorCache {
  /** Node level: answers the request from memory and returns true, or returns false and touches nothing. */
  readonly answer: (req: IncomingMessage, res: ServerResponse) => boolean
  /** Which remembered answer a request would get, or null when it is not one the front door serves. */
  readonly keyOf: (method: string, url: string, headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) => string | null
  /** The current generation; an answer computed from an older one is not remembered. */
  readonly generation: () => number
  /** Remembers the app's answer to `key`, if it is an expected one and nothing was written since `generation`. */
  readonly remember: (key: string, generation: number, response: HttpServerResponse.HttpServerResponse) => void
  /** Forgets everything: called after every write that could change a remembered answer. */
  readonly invalidate: () => void
  readonly stats: () => FrontDoorStats
}

/** Repo page: `/r/<owner>/<repo>`. Checkout: `/checkout/<id>` and `/checkout/<id>/test`. */
const routeOf = (path: string): "page" | "checkout" | null => {
  const parts = path.split("/")
  if (parts[1] === "r") return parts.length === 4 && parts[2] !== "" && parts[3] !== "" ? "page" : null
  if (parts[1] === "checkout" && parts[2] !== "" && parts[2] !== undefined) {
    return parts.length === 3 || (parts.length === 4 && parts[3] === "test") ? "checkout" : null
  }
  return null
}

const EXPECTED_STATUS = { page: 200, checkout: 402 } as const

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value === undefined ? undefined : value.join(", ")

export const makeFrontDoor = (options: FrontDoorOptions): FrontDoorCache => {
  const now = options.now ?? Date.now
  const entries = new Map<string, Entry>()
  let generation = 0
  let bytes = 0
  let hits = 0
  let remembered = 0
  let forgotten = 0

  const drop = (key: string, entry: Entry) => {
    entries.delete(key)
    bytes -= entry.body.byteLength
  }

  const keyOf: FrontDoorCache["keyOf"] = (method, url, headers) => {
    if (options.ttlMs <= 0 || method !== "GET" || url.includes("?")) return null
    // A GET with a body is unusual enough to leave to the app.
    const length = single(headers["content-length"])
    if ((length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined) return null
    const route = routeOf(url)
    if (route === "page") return prefersHtml(single(headers["accept"])) ? null : `page ${url}`
    if (route === "checkout") {
      // A payment or a wallet's sign-in proof is the app's to answer.
      const plain = headers["payment-signature"] === undefined && headers["x-payment"] === undefined && headers["sign-in-with-x"] === undefined
      // A browser's checkout page carries a fresh CSP nonce, like the HTML repo page.
      return plain && !prefersHtml(single(headers["accept"])) ? `checkout ${url}` : null
    }
    return null
  }

  const answer: FrontDoorCache["answer"] = (req, res) => {
    const key = keyOf(req.method ?? "", req.url ?? "", req.headers as IncomingHttpHeaders)
    if (key === null) return false
    const entry = entries.get(key)
    if (entry === undefined) return false
    if (now() >= entry.expires) {
      drop(key, entry)
      return false
    }
    hits++
    res.writeHead(entry.status, entry.headers)
    res.end(entry.body)
    options.log?.(`${req.method} ${loggablePath(req.url ?? "")} ${entry.status} 0ms (front door)${requestIdSuffix(req)}`)
    return true
  }

  const remember: FrontDoorCache["remember"] = (key, startedAt, response) => {
    if (startedAt !== generation || response.body._tag !== "Uint8Array") return
    if (response.status !== EXPECTED_STATUS[key.startsWith("page ") ? "page" : "checkout"]) return
    // An answer that sets a cookie belongs to one client: never replayed to another.
    if (!Cookies.isEmpty(response.cookies) || response.headers["set-cookie"] !== undefined) return
    const body = response.body.body
    if (body.byteLength > options.maxBytes) return
    const previous = entries.get(key)
    if (previous !== undefined) drop(key, previous)
    while (entries.size >= options.maxEntries || bytes + body.byteLength > options.maxBytes) {
      const oldest = entries.entries().next().value
      if (oldest === undefined) break
      drop(oldest[0], oldest[1])
    }
    entries.set(key, { status: response.status, headers: { ...response.headers }, body, expires: now() + options.ttlMs })
    bytes += body.byteLength
    remembered++
  }

  const invalidate = () => {
    generation++
    if (entries.size > 0) forgotten += entries.size
    entries.clear()
    bytes = 0
  }

  return {
    answer,
    keyOf,
    generation: () => generation,
    remember,
    invalidate,
    stats: () => ({ hits, remembered, forgotten, entries: entries.size, bytes })
  }
}

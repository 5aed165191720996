import { PROBLEM_CONTENT_TYPE, problemBody } from "../../app/Problem.js"
import type { HttpEventV2, HttpResultV2, LambdaContext } from "./Events.js"

/**
 * AWS Lambda's limit on a synchronous (buffered) response payload: "6 MB", enforced on the JSON the
 * function returns (status, headers, cookies and the body as a JSON string, base64 for binary bodies).
 * The figure is the one Lambda's own error names: "exceeded maximum allowed payload size (6291556 bytes)".
 */
export const RESPONSE_PAYLOAD_LIMIT = 6_291_556

/** A web-standard handler: the HTTP application as `HttpApp.toWebHandlerRuntime` exposes it. */
export type WebHandler = (request: Request, event: HttpEventV2) => Promise<Response>

/** The Lambda entry point for API Gateway HTTP API (payload 2.0) and Function URL events. */
export type HttpEventHandler = (event: HttpEventV2, context?: LambdaContext) => Promise<HttpResultV2>

/** Options of the buffered Lambda handler. */
export interface AdapterOptions {
  /** The payload limit to honour (bytes of the returned JSON); tests lower it. */
  readonly responseLimitBytes?: number
}

/**
 * Bodies sent as UTF-8 text; everything else (application/gzip archives, images) is base64. JSON and
 * problem+json, HTML and the other text types are what the app answers as text.
 */
export const isTextType = (contentType: string | null | undefined): boolean => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  return type.startsWith("text/") ||
    /^application\/([\w.-]+\+)?(json|xml)$/.test(type) ||
    type === "application/javascript" ||
    type === "application/x-www-form-urlencoded" ||
    type === "image/svg+xml"
}

/** With a named HTTP API stage, `rawPath` starts with `/<stage>`; the app's routes do not. */
const appPath = (event: HttpEventV2): string => {
  const stage = event.requestContext.stage
  const raw = event.rawPath === "" ? "/" : event.rawPath
  if (stage === undefined || stage === "$default" || stage === "") return raw
  const prefix = `/${stage}`
  if (raw === prefix) return "/"
  return raw.startsWith(`${prefix}/`) ? raw.slice(prefix.length) : raw
}

/**
 * The event as a web Request. Repeated headers arrive comma-joined (as HTTP allows for list headers);
 * request cookies arrive in `cookies` and go back into one `Cookie` header. The body is decoded from base64
 * when flagged so, and `Content-Length` is recomputed from what is actually passed on.
 */
export const toWebRequest = (event: HttpEventV2): Request => {
  const method = event.requestContext.http.method.toUpperCase()
  const query = event.rawQueryString ? `?${event.rawQueryString}` : ""
  // The app builds absolute URLs from BASE_URL, never from the request's host: any valid origin will do.
  const host = event.requestContext.domainName ?? ""
  const origin = URL.canParse(`https://${host}/`) ? `https://${host}` : "https://lambda.invalid"
  const url = new URL(`${origin}${appPath(event)}${query}`)
  const headers = new Headers()
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value === undefined || name.toLowerCase() === "content-length") continue
    headers.set(name, value)
  }
  if (event.cookies && event.cookies.length > 0) {
    const fromHeader = headers.get("cookie")
    headers.set("cookie", [...(fromHeader ? [fromHeader] : []), ...event.cookies].join("; "))
  }
  const hasBody = method !== "GET" && method !== "HEAD" && event.body != null && event.body !== ""
  if (!hasBody) return new Request(url, { method, headers })
  const body = event.isBase64Encoded ? Buffer.from(event.body!, "base64") : Buffer.from(event.body!, "utf8")
  headers.set("content-length", String(body.length))
  return new Request(url, { method, headers, body })
}

/** Bytes of the payload Lambda would send for this result. */
const payloadBytes = (result: HttpResultV2): number => Buffer.byteLength(JSON.stringify(result), "utf8")

/**
 * Reads a body, keeping at most `cap` bytes: past that it stops reading and cancels the stream (which, for
 * the app's streamed archives, interrupts the producer). Null: the body is longer than `cap`.
 */
export const readAtMost = async (body: ReadableStream<Uint8Array> | null, cap: number): Promise<Uint8Array | null> => {
  if (body === null) return new Uint8Array(0)
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const next = await reader.read()
    if (next.done) break
    total += next.value.byteLength
    if (total > cap) {
      await reader.cancel().catch(() => undefined)
      return null
    }
    chunks.push(next.value)
  }
  return Buffer.concat(chunks, total)
}

/** The target of a `Link: <url>; rel="receipt"` header, if the response carries one. */
export const receiptLink = (link: string | null): string | null => {
  if (link === null) return null
  for (const part of link.split(",")) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part)
    if (match && /(^|;)\s*rel="?receipt"?\s*(;|$)/i.test(match[2]!)) return match[1]!
  }
  return null
}

/** Headers of the original answer that still matter to a buyer who could not get the body. */
const KEPT_ON_TOO_LARGE = ["link", "payment-response", "x-payment-response"]

/**
 * The answer when a body cannot fit in a Lambda response: a 502 problem (the request was fine; this
 * deployment cannot deliver the answer) naming the limit and, for a paid archive, the receipt link, which
 * re-downloads without paying again. The settlement headers are kept so an x402 client still learns the
 * payment went through.
 */
export const tooLargeResult = (original: Response, limit: number): HttpResultV2 => {
  const receipt = receiptLink(original.headers.get("link"))
  const detail = `The ${original.status} answer to this request is larger than this deployment can send in one response ` +
    `(the ${limit}-byte AWS Lambda response payload limit). ` +
    (receipt === null
      ? "Only the answer could not be sent; ask the operator for a route without this limit."
      : "Any payment made with this request is recorded: the receipt link downloads the same archive again without paying.")
  const problem = { ...problemBody(502, "response_too_large", "Response too large", detail), limit_bytes: limit, ...(receipt === null ? {} : { receipt }) }
  const headers: Record<string, string> = { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store" }
  for (const name of KEPT_ON_TOO_LARGE) {
    const value = original.headers.get(name)
    if (value !== null) headers[name] = value
  }
  return { statusCode: 502, headers, body: JSON.stringify(problem), isBase64Encoded: false }
}

/**
 * The web Response as a payload 2.0 result: single-valued headers, `Set-Cookie` values in `cookies`, text
 * bodies as UTF-8 and others as base64. Never holds more of the body than fits under the limit (plus the
 * chunk that crossed it): an oversized body is answered by `tooLargeResult`.
 */
export const toLambdaResult = async (response: Response, options: AdapterOptions = {}): Promise<HttpResultV2> => {
  const limit = options.responseLimitBytes ?? RESPONSE_PAYLOAD_LIMIT
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  const text = isTextType(response.headers.get("content-type"))
  const envelope: HttpResultV2 = { statusCode: response.status, headers, ...(cookies.length > 0 ? { cookies } : {}), body: "", isBase64Encoded: !text }
  const budget = limit - payloadBytes(envelope)
  // Base64 turns every 3 bytes into 4 characters; JSON escaping only ever lengthens text.
  const cap = text ? budget : Math.floor(budget / 4) * 3
  if (cap < 0) {
    await response.body?.cancel().catch(() => undefined)
    return tooLargeResult(response, limit)
  }
  const bytes = await readAtMost(response.body, cap)
  if (bytes === null) return tooLargeResult(response, limit)
  if (bytes.length === 0) return { ...envelope, isBase64Encoded: false }
  let result: HttpResultV2 = { ...envelope, body: Buffer.from(bytes).toString("base64") }
  if (text) {
    try {
      result = { ...envelope, body: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) }
    } catch {
      result = { ...envelope, isBase64Encoded: true, body: Buffer.from(bytes).toString("base64") }
    }
  }
  return payloadBytes(result) > limit ? tooLargeResult(response, limit) : result
}

export const badRequest = (detail: string): HttpResultV2 => ({
  statusCode: 400,
  headers: { "content-type": PROBLEM_CONTENT_TYPE },
  body: JSON.stringify(problemBody(400, "bad_request", "Bad request", detail)),
  isBase64Encoded: false
})

/** A Lambda handler over a web handler: event → Request, Response → result within the payload limit. */
export const fromWebHandler = (webHandler: WebHandler, options: AdapterOptions = {}): HttpEventHandler =>
  async (event) => {
    let request: Request
    try {
      request = toWebRequest(event)
    } catch {
      // A header value or path that no HTTP request could carry (API Gateway passes some through).
      return badRequest("The request line or a header is malformed.")
    }
    return toLambdaResult(await webHandler(request, event), options)
  }

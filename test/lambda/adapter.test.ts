import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  fromWebHandler,
  isTextType,
  readAtMost,
  receiptLink,
  RESPONSE_PAYLOAD_LIMIT,
  toLambdaResult,
  toWebRequest
} from "../../hosts/lambda/EventAdapter.js"
import type { HttpEventV2 } from "../../hosts/lambda/Events.js"
import { FUNCTION_URL_EVENT, HTTP_API_EVENT } from "./support.js"

const payloadBytes = (result: unknown) => Buffer.byteLength(JSON.stringify(result))

describe("event → web Request", () => {
  it("takes the documented HTTP API v2 example as AWS sends it: method, path, query, headers, cookies, body", async () => {
    const request = toWebRequest(HTTP_API_EVENT)
    expect(request.method).toBe("POST")
    const url = new URL(request.url)
    expect(url.pathname + url.search).toBe("/my/path?parameter1=value1&parameter1=value2&parameter2=value")
    expect(url.searchParams.getAll("parameter1")).toEqual(["value1", "value2"])
    expect(request.headers.get("header1")).toBe("value1")
    // Comma-joined repeats stay one header, which is what HTTP list headers mean.
    expect(request.headers.get("header2")).toBe("value1,value2")
    expect(request.headers.get("cookie")).toBe("cookie1; cookie2")
    expect(await request.text()).toBe("Hello from Lambda")
    expect(request.headers.get("content-length")).toBe(String(Buffer.byteLength("Hello from Lambda")))
  })

  it("takes the documented Function URL example (placeholder domain, null fields)", async () => {
    const request = toWebRequest(FUNCTION_URL_EVENT)
    expect(new URL(request.url).pathname).toBe("/my/path")
    expect(request.headers.get("cookie")).toBe("cookie1; cookie2")
    expect(await request.text()).toBe("Hello from client!")
  })

  it("decodes a base64 body to its bytes and recomputes Content-Length; GET and HEAD carry no body", async () => {
    const bytes = Buffer.from([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x3a, 0x31, 0x7d, 0x00, 0xff])
    const event: HttpEventV2 = {
      ...HTTP_API_EVENT,
      headers: { "content-type": "application/octet-stream", "content-length": "999" },
      body: bytes.toString("base64"),
      isBase64Encoded: true
    }
    const request = toWebRequest(event)
    expect(Buffer.from(await request.arrayBuffer())).toEqual(bytes)
    expect(request.headers.get("content-length")).toBe(String(bytes.length))

    for (const method of ["GET", "HEAD"]) {
      const bodiless = toWebRequest({ ...HTTP_API_EVENT, requestContext: { ...HTTP_API_EVENT.requestContext, http: { ...HTTP_API_EVENT.requestContext.http, method } } })
      expect(bodiless.body).toBeNull()
    }
  })

  it("strips a named stage from rawPath; keeps $default paths and paths that only look alike", () => {
    const staged = (rawPath: string, stage: string) => new URL(toWebRequest({ ...HTTP_API_EVENT, rawPath, requestContext: { ...HTTP_API_EVENT.requestContext, stage } }).url).pathname
    expect(staged("/prod/r/Octo-Org/Widget", "prod")).toBe("/r/Octo-Org/Widget")
    expect(staged("/prod", "prod")).toBe("/")
    expect(staged("/production/x", "prod")).toBe("/production/x")
    expect(staged("/prod/x", "$default")).toBe("/prod/x")
  })

  it("no cookies and no query: no Cookie header and no `?`", () => {
    const { cookies: _c, ...rest } = HTTP_API_EVENT
    const request = toWebRequest({ ...rest, rawQueryString: "", headers: {} })
    expect(request.headers.get("cookie")).toBeNull()
    expect(request.url.endsWith("/my/path")).toBe(true)
  })
})

describe("web Response → payload 2.0 result", () => {
  it("Set-Cookie values become the cookies array; other headers stay single-valued", async () => {
    const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" })
    headers.append("set-cookie", "rm_session=abc; Path=/; HttpOnly; Secure; SameSite=Lax")
    headers.append("set-cookie", "rm_csrf=xyz; Path=/; Secure; SameSite=Strict")
    headers.append("vary", "accept")
    headers.append("vary", "cookie")
    const result = await toLambdaResult(new Response("{\"ok\":true}", { status: 201, headers }))
    expect(result).toEqual({
      statusCode: 201,
      headers: { "content-type": "application/json", "cache-control": "no-store", vary: "accept, cookie" },
      cookies: ["rm_session=abc; Path=/; HttpOnly; Secure; SameSite=Lax", "rm_csrf=xyz; Path=/; Secure; SameSite=Strict"],
      body: "{\"ok\":true}",
      isBase64Encoded: false
    })
  })

  it("text types are UTF-8 text; application/gzip and other types are base64", async () => {
    const text = "caf\u00e9 \u2713 <b>"
    for (const type of ["application/json", "application/problem+json", "text/html; charset=utf-8", "text/plain"]) {
      const result = await toLambdaResult(new Response(text, { headers: { "content-type": type } }))
      expect({ type, body: result.body, b64: result.isBase64Encoded }).toEqual({ type, body: text, b64: false })
      expect(result.cookies).toBeUndefined()
    }
    const gzip = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00])
    for (const type of ["application/gzip", "application/octet-stream", null]) {
      const result = await toLambdaResult(new Response(gzip, type === null ? {} : { headers: { "content-type": type } }))
      expect(result.isBase64Encoded).toBe(true)
      expect(Buffer.from(result.body, "base64")).toEqual(gzip)
    }
    expect(isTextType("application/vnd.api+json")).toBe(true)
    expect(isTextType("application/gzip")).toBe(false)
  })

  it("a text type whose bytes are not UTF-8 falls back to base64 rather than corrupting them", async () => {
    const bytes = Buffer.from([0x68, 0x69, 0xff, 0xfe])
    const result = await toLambdaResult(new Response(bytes, { headers: { "content-type": "text/plain" } }))
    expect(result.isBase64Encoded).toBe(true)
    expect(Buffer.from(result.body, "base64")).toEqual(bytes)
  })

  it("an empty body (204) is an empty string, not base64", async () => {
    const result = await toLambdaResult(new Response(null, { status: 204 }))
    expect(result).toMatchObject({ statusCode: 204, body: "", isBase64Encoded: false })
  })
})

describe("the Lambda response payload limit (6 MB, base64 counted)", () => {
  const gzipResponse = (bytes: Uint8Array, extra: Record<string, string> = {}) =>
    new Response(bytes, { headers: { "content-type": "application/gzip", ...extra } })

  it("the largest binary body whose base64 payload fits is returned; one byte more is the problem", async () => {
    const envelope = payloadBytes({ statusCode: 200, headers: { "content-type": "application/gzip" }, body: "", isBase64Encoded: true })
    const largest = Math.floor((RESPONSE_PAYLOAD_LIMIT - envelope) / 4) * 3
    const fits = await toLambdaResult(gzipResponse(new Uint8Array(largest)))
    expect(fits.statusCode).toBe(200)
    expect(payloadBytes(fits)).toBeLessThanOrEqual(RESPONSE_PAYLOAD_LIMIT)
    expect(payloadBytes(fits)).toBeGreaterThan(RESPONSE_PAYLOAD_LIMIT - 8)

    const over = await toLambdaResult(gzipResponse(new Uint8Array(largest + 1)))
    expect(over.statusCode).toBe(502)
    expect(JSON.parse(over.body)).toMatchObject({ code: "response_too_large", limit_bytes: RESPONSE_PAYLOAD_LIMIT })
  })

  it("JSON escaping counts too: text that fits raw but not escaped is the problem", async () => {
    const limit = 1_000
    const quotes = "\"".repeat(600)
    const result = await toLambdaResult(new Response(quotes, { headers: { "content-type": "text/plain" } }), { responseLimitBytes: limit })
    expect(result.statusCode).toBe(502)
    expect(payloadBytes(result)).toBeLessThanOrEqual(limit)
  })

  it("stops reading a body past the limit: an endless archive stream is cancelled, never buffered", async () => {
    const CHUNK = 64 * 1024
    let pulled = 0
    let cancelled = false
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulled += CHUNK
        controller.enqueue(new Uint8Array(CHUNK))
      },
      cancel: () => {
        cancelled = true
      }
    })
    const receipt = "https://repomarket.example/downloads/dl_abc"
    const response = new Response(endless, {
      headers: { "content-type": "application/gzip", link: `<${receipt}>; rel="receipt"`, "payment-response": "eyJzdWNjZXNzIjp0cnVlfQ==" }
    })
    const result = await toLambdaResult(response)
    expect(cancelled).toBe(true)
    // What fits in base64 (3/4 of the limit), plus the chunk that crossed it and one the stream queued ahead.
    expect(pulled).toBeLessThanOrEqual(Math.ceil(RESPONSE_PAYLOAD_LIMIT * 3 / 4) + 2 * CHUNK)
    expect(result.statusCode).toBe(502)
    expect(result.headers).toMatchObject({ "content-type": "application/problem+json", link: `<${receipt}>; rel="receipt"`, "payment-response": "eyJzdWNjZXNzIjp0cnVlfQ==" })
    const problem = JSON.parse(result.body)
    expect(problem).toMatchObject({ status: 502, code: "response_too_large", receipt })
    expect(problem.detail).toContain(`${RESPONSE_PAYLOAD_LIMIT}-byte AWS Lambda response payload limit`)
  })

  it("readAtMost keeps at most the cap and says when there was more", async () => {
    const stream = (sizes: ReadonlyArray<number>) => new Response(new Blob(sizes.map((n) => new Uint8Array(n)))).body
    expect((await readAtMost(stream([10, 10]), 20))?.length).toBe(20)
    expect(await readAtMost(stream([10, 11]), 20)).toBeNull()
    expect((await readAtMost(null, 0))?.length).toBe(0)
  })

  it("without a receipt link the problem says so plainly", async () => {
    const result = await toLambdaResult(new Response("x".repeat(2_000), { headers: { "content-type": "text/plain" } }), { responseLimitBytes: 1_000 })
    const problem = JSON.parse(result.body)
    expect(problem.code).toBe("response_too_large")
    expect(problem.receipt).toBeUndefined()
  })

  it("receiptLink finds rel=receipt among several links", () => {
    expect(receiptLink("<https://a/x>; rel=\"describedby\", <https://a/dl>; rel=\"receipt\"")).toBe("https://a/dl")
    expect(receiptLink("<https://a/x>; rel=\"describedby\"")).toBeNull()
    expect(receiptLink(null)).toBeNull()
  })
})

describe("the whole adapter around a web handler (cookies in and out)", () => {
  // A tiny Effect HttpApp, turned into a web handler the way the real one is: it echoes the Cookie header it
  // received and sets two cookies, so the platform's own Set-Cookie encoding goes through the mapping.
  const echo = HttpApp.toWebHandler(Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    const response = HttpServerResponse.unsafeJson({ cookie: req.headers["cookie"] ?? null, cookies: req.cookies, path: req.url })
    return yield* HttpServerResponse.setCookies(response, [
      ["rm_session", "s3cr3t", { path: "/", httpOnly: true, secure: true, sameSite: "lax" }],
      ["rm_theme", "dark", { path: "/", maxAge: "1 day" }]
    ])
  }).pipe(Effect.orDie))
  const handler = fromWebHandler((request) => echo(request))

  it("event.cookies reach the app as one Cookie header; Set-Cookie comes back as the cookies array", async () => {
    for (const base of [HTTP_API_EVENT, FUNCTION_URL_EVENT]) {
      const result = await handler({ ...base, cookies: ["rm_session=abc", "rm_csrf=x y"], headers: { accept: "application/json" } })
      expect(result.statusCode).toBe(200)
      expect(JSON.parse(result.body)).toEqual({
        cookie: "rm_session=abc; rm_csrf=x y",
        cookies: { rm_session: "abc", rm_csrf: "x y" },
        path: "/my/path?parameter1=value1&parameter1=value2&parameter2=value"
      })
      expect(result.cookies).toEqual(["rm_session=s3cr3t; Path=/; HttpOnly; Secure; SameSite=Lax", "rm_theme=dark; Max-Age=86400; Path=/"])
      expect(Object.keys(result.headers).map((h) => h.toLowerCase())).not.toContain("set-cookie")
    }
  })

  it("a header no HTTP request could carry is a 400 problem, not a crash", async () => {
    const result = await handler({ ...HTTP_API_EVENT, headers: { "x-bad": "line\nbreak" } })
    expect(result.statusCode).toBe(400)
    expect(JSON.parse(result.body)).toMatchObject({ code: "bad_request" })
  })
})

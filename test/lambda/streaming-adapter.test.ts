import { Writable } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { type AwsLambdaGlobal, fromWebHandlerStreaming, StreamedResponseTooLarge } from "../../hosts/lambda/StreamingAdapter.js"
import { httpEvent } from "./support.js"

/*
 * The streaming adapter against an in-process `awslambda` that frames the response as AWS documents it (JSON
 * prelude, 8 NUL bytes, body) into memory: the limit, cookies and the problems it answers itself. The whole
 * path (bundle, runtime stand-in, PostgreSQL) is test/lambda/streaming.test.ts.
 */

const framed = () => {
  const chunks: Array<Buffer> = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk)
      callback()
    }
  })
  const awslambda: AwsLambdaGlobal = {
    streamifyResponse: (handler) => handler,
    HttpResponseStream: {
      from: (stream, metadata) => {
        stream.write(Buffer.from(JSON.stringify(metadata)))
        stream.write(Buffer.alloc(8))
        return stream
      }
    }
  }
  const parse = () => {
    const all = Buffer.concat(chunks)
    const at = all.indexOf(Buffer.alloc(8))
    return { prelude: JSON.parse(all.subarray(0, at).toString("utf8")), body: all.subarray(at + 8), total: all.length }
  }
  return { sink, awslambda, parse }
}

const bytesStream = (chunks: number, size: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(size).fill(i))
      controller.close()
    }
  })

describe("streaming adapter", () => {
  it("sends status and headers in the prelude, Set-Cookie values in `cookies`, then the body", async () => {
    const { sink, awslambda, parse } = framed()
    const handler = fromWebHandlerStreaming(async () => {
      const headers = new Headers({ "content-type": "text/html; charset=utf-8" })
      headers.append("set-cookie", "rm_session=abc; HttpOnly; Path=/")
      headers.append("set-cookie", "other=1; Path=/")
      return new Response("<p>hi</p>", { status: 303, headers })
    }, awslambda)
    await handler(httpEvent("GET", "/dashboard", { kind: "function-url" }), sink)
    const { prelude, body } = parse()
    expect(prelude).toEqual({
      statusCode: 303,
      headers: { "content-type": "text/html; charset=utf-8" },
      cookies: ["rm_session=abc; HttpOnly; Path=/", "other=1; Path=/"]
    })
    expect(body.toString("utf8")).toBe("<p>hi</p>")
  })

  it("a body that passes the limit mid-stream is cut before the chunk that crosses it, and the invocation fails", async () => {
    const { sink, awslambda, parse } = framed()
    const limit = 10_000
    const handler = fromWebHandlerStreaming(
      async () => new Response(bytesStream(10, 1_500), { headers: { "content-type": "application/gzip", link: "<https://x.test/downloads/SECRET>; rel=\"receipt\"" } }),
      awslambda,
      { responseLimitBytes: limit }
    )
    const failure = await handler(httpEvent("GET", "/checkout/x", { kind: "function-url" }), sink).then(() => null, (e: unknown) => e)
    expect(failure).toBeInstanceOf(StreamedResponseTooLarge)
    expect(String((failure as Error).message)).not.toContain("SECRET")
    const { prelude, body, total } = parse()
    expect(prelude.statusCode).toBe(200)
    expect(prelude.headers.link).toContain("rel=\"receipt\"")
    expect(total).toBeLessThanOrEqual(limit)
    // Whole chunks only: as many 1 500-byte chunks as fit after the prelude.
    expect(body.length % 1_500).toBe(0)
    expect(total + 1_500).toBeGreaterThan(limit)
  })

  it("a declared Content-Length over the limit is answered 502 response_too_large before any of the body is read", async () => {
    const { sink, awslambda, parse } = framed()
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(1000))
      }
    })
    const handler = fromWebHandlerStreaming(
      async () => new Response(body, { headers: { "content-type": "application/gzip", "content-length": "50000", link: "<https://x.test/downloads/t>; rel=\"receipt\"" } }),
      awslambda,
      { responseLimitBytes: 10_000 }
    )
    await handler(httpEvent("GET", "/downloads/t", { kind: "function-url" }), sink)
    const { prelude, body: sent } = parse()
    expect(prelude.statusCode).toBe(502)
    expect(prelude.headers["content-type"]).toMatch(/^application\/problem\+json/)
    expect(JSON.parse(sent.toString("utf8"))).toMatchObject({ code: "response_too_large", receipt: "https://x.test/downloads/t", limit_bytes: 10_000 })
    expect(pulled).toBeLessThanOrEqual(1)
  })

  it("an event no HTTP request could carry is a 400 problem, and the app is not called", async () => {
    const { sink, awslambda, parse } = framed()
    let called = false
    const handler = fromWebHandlerStreaming(async () => {
      called = true
      return new Response("")
    }, awslambda)
    await handler(httpEvent("GET", "/", { kind: "function-url", headers: { "x-bad": "a\nb" } }), sink)
    expect(called).toBe(false)
    const { prelude, body } = parse()
    expect(prelude.statusCode).toBe(400)
    expect(JSON.parse(body.toString("utf8"))).toMatchObject({ code: "bad_request" })
  })
})

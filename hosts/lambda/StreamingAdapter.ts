import { Readable, Transform, type Writable } from "node:stream"
import { finished, pipeline } from "node:stream/promises"
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web"
import { badRequest, tooLargeResult, toWebRequest, type WebHandler } from "./EventAdapter.js"
import type { HttpEventV2, HttpResultV2, LambdaContext } from "./Events.js"

/**
 * AWS Lambda's limit on a streamed response: "response streaming functions can return payloads up to 200 MB"
 * (AWS Lambda Developer Guide, "Response streaming for Lambda functions", raised from a 20 MB soft limit in
 * July 2025). Read as decimal megabytes, so this is never above AWS's figure whichever megabyte it means;
 * the JSON prelude and its 8-byte delimiter count against it.
 */
export const STREAMED_RESPONSE_LIMIT = 200_000_000

/** The prelude `awslambda.HttpResponseStream.from` sends before the body (status, headers, cookies). */
export interface ResponseStreamMetadata {
  /** The HTTP status. */
  readonly statusCode: number
  /** Single-valued headers. */
  readonly headers: Record<string, string>
  /** One `Set-Cookie` value per entry. */
  readonly cookies?: Array<string>
}

/**
 * The part of the Node.js runtime's `awslambda` global this host uses. It is not a package: the runtime
 * defines it, so it is declared here after AWS's documentation and handed in (tests give a stand-in).
 */
export interface AwsLambdaGlobal {
  /** Marks a handler as streaming: the runtime then calls it as `(event, responseStream, context)`. */
  readonly streamifyResponse: <H extends StreamingEventHandler>(handler: H) => H
  /** Wraps the runtime's response stream so it writes the metadata prelude first. */
  readonly HttpResponseStream: {
    /** The stream with the metadata prelude (JSON, then 8 NUL bytes) written before the first body byte. */
    readonly from: (stream: Writable, metadata: ResponseStreamMetadata) => Writable
  }
}

/** A streaming handler as the runtime calls it. */
export type StreamingEventHandler = (event: HttpEventV2, responseStream: Writable, context?: LambdaContext) => Promise<void>

/** Options of the streaming Lambda handler. */
export interface StreamingOptions {
  /** The streamed-response limit to honour, prelude included (bytes); tests lower it. */
  readonly responseLimitBytes?: number
}

/**
 * Raised when a body passes the limit after its first bytes went out: the status line cannot change any
 * more, so the stream is cut (the runtime reports the failure and the client sees a broken transfer, never
 * a complete-looking answer). The message names sizes only: the answer's headers may hold a receipt link,
 * which is bearer access to paid goods and must not reach the logs.
 */
export class StreamedResponseTooLarge extends Error {
  /** The error's name, for logs. */
  override readonly name = "StreamedResponseTooLarge"
  constructor(
    /** The limit passed, in bytes. */
    readonly limitBytes: number,
    /** The bytes already sent when the stream was cut. */
    readonly sentBytes: number
  ) {
    super(
      `The response body passed the ${limitBytes}-byte AWS Lambda streamed response limit after ${sentBytes} bytes; ` +
        "the stream was cut. A paid archive's sale is recorded and its receipt link went out in the headers."
    )
  }
}

/** Status, single-valued headers and cookies of a web Response, as the prelude carries them. */
export const metadataOf = (response: Response): ResponseStreamMetadata => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  return { statusCode: response.status, headers, ...(cookies.length > 0 ? { cookies } : {}) }
}

/** Bytes of the prelude and its delimiter as the runtime sends them. */
const preludeBytes = (metadata: ResponseStreamMetadata) => Buffer.byteLength(JSON.stringify(metadata), "utf8") + 8

/** Passes bytes through until `budget` would be passed, then fails without writing the chunk that crosses it. */
const capAt = (budget: number, limit: number, prelude: number) => {
  let sent = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (sent + chunk.length > budget) return callback(new StreamedResponseTooLarge(limit, prelude + sent))
      sent += chunk.length
      callback(null, chunk)
    }
  })
}

/** A whole (buffered-shape) answer written as one streamed response: the adapter's own problems. */
export const writeResult = async (awslambda: AwsLambdaGlobal, responseStream: Writable, result: HttpResultV2) => {
  const out = awslambda.HttpResponseStream.from(responseStream, {
    statusCode: result.statusCode,
    headers: result.headers,
    ...(result.cookies === undefined ? {} : { cookies: result.cookies })
  })
  out.end(Buffer.from(result.body, result.isBase64Encoded ? "base64" : "utf8"))
  await finished(out)
}

/**
 * A streaming Lambda handler over a web handler: event → Request as the buffered adapter makes it; the
 * Response's status, headers and cookies in the prelude, then its body piped chunk by chunk with the
 * runtime's backpressure (never held whole). A body whose declared length cannot fit is answered by the
 * buffered adapter's 502 `response_too_large` problem before anything is sent; one that passes the limit
 * while streaming is cut (`StreamedResponseTooLarge`).
 */
export const fromWebHandlerStreaming = (
  webHandler: WebHandler,
  awslambda: AwsLambdaGlobal,
  options: StreamingOptions = {}
): StreamingEventHandler =>
  async (event, responseStream) => {
    const limit = options.responseLimitBytes ?? STREAMED_RESPONSE_LIMIT
    let request: Request
    try {
      request = toWebRequest(event)
    } catch {
      return writeResult(awslambda, responseStream, badRequest("The request line or a header is malformed."))
    }
    const response = await webHandler(request, event)
    const metadata = metadataOf(response)
    const budget = limit - preludeBytes(metadata)
    const declared = Number(response.headers.get("content-length") ?? Number.NaN)
    if (budget < 0 || declared > budget) {
      await response.body?.cancel().catch(() => undefined)
      return writeResult(awslambda, responseStream, tooLargeResult(response, limit))
    }
    const out = awslambda.HttpResponseStream.from(responseStream, metadata)
    if (response.body === null) {
      out.end()
      return finished(out)
    }
    // A failure of the body (the code host broke off) or of the client side rejects here: the runtime
    // then reports the invocation as failed mid-stream instead of ending a truncated answer cleanly.
    await pipeline(Readable.fromWeb(response.body as NodeWebReadableStream<Uint8Array>), capAt(budget, limit, limit - budget), out)
  }

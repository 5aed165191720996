/*
 * A stand-in for the AWS Lambda Node.js runtime inside one execution environment, written from AWS's
 * documented contracts (Lambda Developer Guide: "Using the Lambda runtime API for custom runtimes",
 * "Response streaming for Lambda functions"), not from the runtime's sources. Plain JavaScript, run with
 * plain `node`, so the bundle it loads is measured without any loader.
 *
 *   AWS_LAMBDA_RUNTIME_API=127.0.0.1:<port> LAMBDA_BUNDLE=/abs/streaming.mjs LAMBDA_EXPORT=handler node --expose-gc bootstrap.mjs
 *
 * - defines the `awslambda` global (streamifyResponse, HttpResponseStream.from) before the bundle loads;
 * - init: imports the bundle (its top-level await builds the app); prints `INIT Duration: <ms> ms` as Lambda's
 *   log does (and the CPU time it took), or posts the failure to /runtime/init/error and exits;
 * - then loops: GET /runtime/invocation/next, call the handler, and answer. A streaming handler's bytes go to
 *   POST /runtime/invocation/<id>/response with `Lambda-Runtime-Function-Response-Mode: streaming` and
 *   chunked encoding; `HttpResponseStream.from` makes the body a JSON prelude, 8 NUL bytes, then the body.
 *   A failure after the first byte ends the request with the `Lambda-Runtime-Function-Error-Type` and
 *   `-Error-Body` trailers; before it, POST /runtime/invocation/<id>/error.
 * - after each invocation prints `REPORT RequestId: <id> Duration: <ms> ms Heap Growth: <bytes> bytes Peak
 *   Growth: <bytes> bytes`. Both count V8 heap used + ArrayBuffer memory (Buffers live outside the V8 heap: a
 *   handler that buffered an archive in Buffers must show), over the level after a forced GC just before the
 *   invocation. Heap Growth is what stays live: sampled every 50 ms right after a forced GC (with
 *   --expose-gc), so it does not depend on when V8 chooses to collect. Peak Growth is the highest level seen
 *   without forcing anything, garbage included.
 */
import { request } from "node:http"
import { Writable } from "node:stream"
import { finished } from "node:stream/promises"
import { pathToFileURL } from "node:url"

const API = `http://${process.env.AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime`
const STREAMING = Symbol.for("repomarket.test.streamingHandler")
const PRELUDE_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response"

const call = (method, url, body, headers = {}) =>
  new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

const errorJson = (error) =>
  JSON.stringify({ errorType: error?.name ?? "Error", errorMessage: String(error?.message ?? error), trace: [] })

/** The stream a streaming handler writes to: the body of one chunked POST to the Runtime API. */
class ResponseStream extends Writable {
  constructor(requestId) {
    super({ highWaterMark: 64 * 1024 })
    this.postuestId = requestId
    this.contentType = "application/octet-stream"
    this.prelude = null
    // Not `req`: Node's pipeline aborts a stream's `.req` on failure (a compatibility path for HTTP
    // responses), which would drop the error trailers.
    this.post = null
    this.answered = null
    // A failure is reported through the trailers (see _destroy); the handler's rejection carries it too.
    this.on("error", () => undefined)
  }
  setContentType(type) {
    if (this.post !== null) throw new Error("the content type is set before the first write")
    this.contentType = type
  }
  get started() {
    return this.post !== null
  }
  start() {
    if (this.post !== null) return
    this.answered = new Promise((resolve, reject) => {
      this.post = request(`${API}/invocation/${this.postuestId}/response`, {
        method: "POST",
        headers: {
          "Lambda-Runtime-Function-Response-Mode": "streaming",
          "Transfer-Encoding": "chunked",
          "Content-Type": this.contentType,
          "Trailer": "Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body"
        }
      }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode))
      })
      this.post.on("error", reject)
    })
    if (this.prelude !== null) {
      this.post.write(this.prelude)
      this.post.write(new Uint8Array(8))
    }
  }
  _write(chunk, _encoding, callback) {
    this.start()
    if (this.post.write(chunk)) callback()
    else this.post.once("drain", () => callback())
  }
  _final(callback) {
    this.start()
    this.post.end()
    this.answered.then(() => callback(), callback)
  }
  _destroy(error, callback) {
    if (error && this.post !== null && !this.post.writableEnded) {
      this.post.addTrailers({
        "Lambda-Runtime-Function-Error-Type": error.name ?? "Error",
        "Lambda-Runtime-Function-Error-Body": Buffer.from(errorJson(error)).toString("base64")
      })
      this.post.end()
    }
    callback(error)
  }
}

globalThis.awslambda = {
  streamifyResponse: (handler) => Object.assign(handler, { [STREAMING]: true }),
  HttpResponseStream: {
    from: (stream, metadata) => {
      // JSON cannot hold a raw NUL, so the 8 NUL bytes cannot occur inside the prelude.
      stream.setContentType(PRELUDE_CONTENT_TYPE)
      stream.prelude = Buffer.from(JSON.stringify(metadata), "utf8")
      return stream
    }
  }
}

const footprint = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

const initStarted = performance.now()
const initCpu = process.cpuUsage()
let handler
try {
  const module = await import(pathToFileURL(process.env.LAMBDA_BUNDLE).href)
  handler = module[process.env.LAMBDA_EXPORT ?? "handler"]
  if (typeof handler !== "function") throw new Error(`the bundle exports no function ${process.env.LAMBDA_EXPORT}`)
} catch (error) {
  await call("POST", `${API}/init/error`, errorJson(error), { "Lambda-Runtime-Function-Error-Type": "Runtime.ImportModuleError" })
  process.exit(1)
}
// CPU time as well: on a shared machine the wall-clock figure mostly measures the wait for a core.
const cpu = process.cpuUsage(initCpu)
console.log(`INIT Duration: ${(performance.now() - initStarted).toFixed(2)} ms CPU: ${((cpu.user + cpu.system) / 1000).toFixed(2)} ms`)

for (;;) {
  const next = await call("GET", `${API}/invocation/next`)
  const requestId = next.headers["lambda-runtime-aws-request-id"]
  const deadline = Number(next.headers["lambda-runtime-deadline-ms"])
  const context = { awsRequestId: requestId, getRemainingTimeInMillis: () => deadline - Date.now() }
  const event = JSON.parse(next.body)
  globalThis.gc?.()
  const baseline = footprint()
  let peak = baseline
  let live = baseline
  const sample = setInterval(() => {
    peak = Math.max(peak, footprint())
    globalThis.gc?.()
    live = Math.max(live, footprint())
  }, 50)
  const started = performance.now()
  if (handler[STREAMING] === true) {
    const stream = new ResponseStream(requestId)
    const probe = stream.write.bind(stream)
    stream.write = (...args) => {
      peak = Math.max(peak, footprint())
      return probe(...args)
    }
    try {
      await handler(event, stream, context)
      if (!stream.writableEnded) stream.end()
      await finished(stream)
    } catch (error) {
      if (stream.started) {
        if (!stream.destroyed) stream.destroy(error)
        await stream.answered.catch(() => undefined)
      } else {
        await call("POST", `${API}/invocation/${requestId}/error`, errorJson(error), { "Lambda-Runtime-Function-Error-Type": error?.name ?? "Error" })
      }
    }
  } else {
    try {
      const result = await handler(event, context)
      await call("POST", `${API}/invocation/${requestId}/response`, JSON.stringify(result ?? null))
    } catch (error) {
      await call("POST", `${API}/invocation/${requestId}/error`, errorJson(error), { "Lambda-Runtime-Function-Error-Type": error?.name ?? "Error" })
    }
  }
  clearInterval(sample)
  peak = Math.max(peak, footprint())
  if (globalThis.gc === undefined) live = peak
  console.log(`REPORT RequestId: ${requestId} Duration: ${(performance.now() - started).toFixed(2)} ms Heap Growth: ${live - baseline} bytes Peak Growth: ${peak - baseline} bytes`)
}

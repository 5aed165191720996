/*
 * A stand-in for the Lambda service around one execution environment, after AWS's documented Runtime API
 * (`/2018-06-01/runtime/...`) and streamed-response format: a loopback HTTP server the environment polls for
 * events and answers to, and a child process running bootstrap.mjs (the Node.js runtime's part) over a
 * BUNDLE. What a test gets back is what a Function URL caller would: status, headers and cookies from the
 * prelude, then the body as a stream (cut with an error when the function failed mid-stream). No Effect or
 * vitest here, so the benchmarks use it too.
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { PassThrough, type Readable } from "node:stream"
import { fileURLToPath } from "node:url"

const BOOTSTRAP = fileURLToPath(new URL("./bootstrap.mjs", import.meta.url))
const PRELUDE_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response"
const DELIMITER = Buffer.alloc(8)
/** A prelude longer than this is a broken stream, not a slow one. */
const MAX_PRELUDE = 1024 * 1024

export interface InvocationEnd {
  /** `Lambda-Runtime-Function-Error-Type` / `-Error-Body` (decoded), from the trailers or an /error call. */
  readonly errorType?: string
  readonly errorBody?: string
}

export interface LambdaAnswer {
  readonly requestId: string
  /** `streaming`: the response came as a chunked stream; `buffered`: one JSON result; `error`: /error. */
  readonly mode: "streaming" | "buffered" | "error"
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>
  readonly cookies: ReadonlyArray<string>
  /** The body bytes after the prelude; destroyed with an error when the function failed mid-stream. */
  readonly body: Readable
  readonly ended: Promise<InvocationEnd>
}

export interface Report {
  readonly requestId: string
  readonly durationMs: number
  /** Live (V8 heap used + ArrayBuffers), sampled after forced GCs during the invocation, over the level before it. */
  readonly heapGrowthBytes: number
  /** The same sampled without forcing a GC: garbage not yet collected included. */
  readonly peakGrowthBytes: number
}

export interface FakeLambda {
  /** Queues one event; resolves when the function has sent its status and headers. */
  readonly invoke: (event: unknown) => Promise<LambdaAnswer>
  /** `INIT Duration` as the environment printed it: module load until the handler was ready. */
  readonly initDurationMs: Promise<number>
  /** The environment's REPORT line for an invocation (printed after its response ended). */
  readonly report: (requestId: string) => Promise<Report>
  /** CPU time (user + system) the init took, once `initDurationMs` has resolved. */
  readonly initCpuMs: () => number
  /** Everything the environment wrote (logs), for failure messages. */
  readonly output: () => string
  readonly close: () => Promise<void>
}

export interface FakeLambdaOptions {
  /** Absolute path of the bundled .mjs. */
  readonly bundle: string
  readonly exportName?: string
  /** The function's environment variables (nothing else of this process's environment is passed). */
  readonly env: Readonly<Record<string, string>>
  readonly nodeOptions?: ReadonlyArray<string>
}

interface Pending {
  readonly id: string
  readonly event: string
  readonly answer: (a: LambdaAnswer) => void
  readonly fail: (e: Error) => void
}

const textBody = (text: string): Readable => {
  const body = new PassThrough()
  body.end(Buffer.from(text, "utf8"))
  return body
}

const readAll = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject)
  })

const fromBase64 = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8"))

export const startFakeLambda = async (options: FakeLambdaOptions): Promise<FakeLambda> => {
  const queue: Array<Pending> = []
  const waiting: Array<(p: Pending) => void> = []
  const inFlight = new Map<string, Pending>()
  const reports = new Map<string, Report>()
  const reportWaiters = new Map<string, (r: Report) => void>()
  const sockets = new Set<Socket>()
  let output = ""
  let initCpu = Number.NaN
  let initDone: (ms: number) => void = () => {}
  let initFailed: (e: Error) => void = () => {}
  const initDurationMs = new Promise<number>((resolve, reject) => {
    initDone = resolve
    initFailed = reject
  })
  initDurationMs.catch(() => undefined)

  const take = () => new Promise<Pending>((resolve) => (queue.length > 0 ? resolve(queue.shift()!) : waiting.push(resolve)))

  const streamed = (pending: Pending, req: IncomingMessage, res: ServerResponse) => {
    const body = new PassThrough()
    let ended: (end: InvocationEnd) => void = () => {}
    const end = new Promise<InvocationEnd>((resolve) => (ended = resolve))
    const withPrelude = (req.headers["content-type"] ?? "").startsWith(PRELUDE_CONTENT_TYPE)
    let head: Buffer | null = withPrelude ? Buffer.alloc(0) : null
    const answer = (statusCode: number, headers: Record<string, string>, cookies: Array<string>) =>
      pending.answer({ requestId: pending.id, mode: "streaming", statusCode, headers, cookies, body, ended: end })
    if (head === null) answer(200, { "content-type": String(req.headers["content-type"] ?? "application/octet-stream") }, [])
    const forward = (chunk: Buffer) => {
      if (chunk.length > 0 && !body.write(chunk)) {
        req.pause()
        body.once("drain", () => req.resume())
      }
    }
    req.on("data", (chunk: Buffer) => {
      if (head === null) return forward(chunk)
      head = Buffer.concat([head, chunk])
      const at = head.indexOf(DELIMITER)
      if (at < 0) {
        if (head.length > MAX_PRELUDE) req.destroy(new Error("no prelude delimiter within 1 MiB"))
        return
      }
      const prelude = JSON.parse(head.subarray(0, at).toString("utf8")) as { statusCode?: number; headers?: Record<string, string>; cookies?: Array<string> }
      const rest = head.subarray(at + DELIMITER.length)
      head = null
      answer(prelude.statusCode ?? 200, prelude.headers ?? {}, prelude.cookies ?? [])
      forward(rest)
    })
    req.on("end", () => {
      const errorType = req.trailers["lambda-runtime-function-error-type"]
      const errorBody = fromBase64(req.trailers["lambda-runtime-function-error-body"])
      if (head !== null) pending.fail(new Error(`the stream ended inside its prelude (${errorType ?? "no error"})`))
      // What a Function URL caller sees of a failure mid-stream: the transfer breaks, it never ends cleanly.
      if (errorType !== undefined) body.destroy(new Error(`the function failed mid-stream: ${errorType}`))
      else body.end()
      ended({ ...(errorType === undefined ? {} : { errorType }), ...(errorBody === undefined ? {} : { errorBody }) })
      res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ status: "OK" }))
    })
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://runtime").pathname
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(path)
    if (req.method === "GET" && path === "/2018-06-01/runtime/invocation/next") {
      return void take().then((p) => {
        inFlight.set(p.id, p)
        res.writeHead(200, {
          "content-type": "application/json",
          "lambda-runtime-aws-request-id": p.id,
          "lambda-runtime-deadline-ms": String(Date.now() + 300_000),
          "lambda-runtime-invoked-function-arn": "arn:aws:lambda:us-east-1:123456789012:function:repomarket-stream",
          "lambda-runtime-trace-id": `Root=1-${randomUUID()}`
        }).end(p.event)
      })
    }
    if (req.method === "POST" && path === "/2018-06-01/runtime/init/error") {
      return void readAll(req).then((text) => {
        initFailed(new Error(`init failed: ${text}`))
        for (const p of [...queue.splice(0), ...inFlight.values()]) p.fail(new Error(`init failed: ${text}`))
        res.writeHead(202).end()
      })
    }
    const pending = match === null ? undefined : inFlight.get(match[1]!)
    if (req.method !== "POST" || pending === undefined) return void res.writeHead(404).end()
    inFlight.delete(pending.id)
    if (match![2] === "error") {
      return void readAll(req).then((text) => {
        const errorType = String(req.headers["lambda-runtime-function-error-type"] ?? "Unhandled")
        // A Function URL answers a function error with 502 and no detail.
        pending.answer({ requestId: pending.id, mode: "error", statusCode: 502, headers: {}, cookies: [], body: textBody(""), ended: Promise.resolve({ errorType, errorBody: text }) })
        res.writeHead(202).end()
      })
    }
    if (req.headers["lambda-runtime-function-response-mode"] === "streaming") return streamed(pending, req, res)
    void readAll(req).then((text) => {
      const result = JSON.parse(text) as { statusCode: number; headers?: Record<string, string>; cookies?: Array<string>; body?: string; isBase64Encoded?: boolean }
      const bytes = Buffer.from(result.body ?? "", result.isBase64Encoded ? "base64" : "utf8")
      const body = new PassThrough()
      body.end(bytes)
      pending.answer({ requestId: pending.id, mode: "buffered", statusCode: result.statusCode, headers: result.headers ?? {}, cookies: result.cookies ?? [], body, ended: Promise.resolve({}) })
      res.writeHead(202).end()
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port

  const child = spawn(process.execPath, [...(options.nodeOptions ?? ["--expose-gc"]), BOOTSTRAP], {
    env: {
      PATH: process.env.PATH ?? "",
      ...options.env,
      AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`,
      LAMBDA_BUNDLE: options.bundle,
      LAMBDA_EXPORT: options.exportName ?? "handler"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let pendingLine = ""
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
    pendingLine += chunk.toString("utf8")
    const lines = pendingLine.split("\n")
    pendingLine = lines.pop()!
    for (const line of lines) {
      const init = /^INIT Duration: ([\d.]+) ms CPU: ([\d.]+) ms$/.exec(line)
      if (init) {
        initCpu = Number(init[2])
        initDone(Number(init[1]))
      }
      const report = /^REPORT RequestId: (\S+) Duration: ([\d.]+) ms Heap Growth: (-?\d+) bytes Peak Growth: (-?\d+) bytes$/.exec(line)
      if (report) {
        const r = { requestId: report[1]!, durationMs: Number(report[2]), heapGrowthBytes: Number(report[3]), peakGrowthBytes: Number(report[4]) }
        reports.set(r.requestId, r)
        reportWaiters.get(r.requestId)?.(r)
      }
    }
  })
  child.stderr.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  child.on("exit", (code) => {
    initFailed(new Error(`the environment exited (${code}) before it was ready:\n${output}`))
    for (const p of [...queue.splice(0), ...inFlight.values()]) p.fail(new Error(`the environment exited (${code}):\n${output}`))
  })

  return {
    invoke: (event) =>
      new Promise<LambdaAnswer>((answer, fail) => {
        const pending: Pending = { id: randomUUID(), event: JSON.stringify(event), answer, fail }
        const waiter = waiting.shift()
        if (waiter === undefined) queue.push(pending)
        else waiter(pending)
      }),
    initDurationMs,
    report: (requestId) =>
      reports.has(requestId) ? Promise.resolve(reports.get(requestId)!) : new Promise((resolve) => reportWaiters.set(requestId, resolve)),
    initCpuMs: () => initCpu,
    output: () => output,
    close: async () => {
      child.kill("SIGKILL")
      await exited
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

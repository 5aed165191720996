/*
 * A real webhook receiver on loopback for the tests under test/webhooks/ and bench/webhook-burst.ts: a
 * node:http server on port 0 that records each request's method, path, headers and raw body, and answers as
 * the test says (a status, a status after a delay, or never). No Effect or vitest here, so scripts can use it.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

export interface Arrival {
  /** 1-based order of arrival. */
  readonly n: number
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body exactly as received (UTF-8). */
  readonly rawBody: string
  /** `id` of the JSON body, when it parses. */
  readonly eventId: string | null
  /** Real time (Date.now()) when the whole body had arrived. */
  readonly arrivedAt: number
  /** The status this receiver answered, while the sender was still listening; null if it never did. */
  answered: number | null
  /** Real time when the sender closed the connection before any answer (a timeout, a killed process). */
  abandonedAt: number | null
}

/** A status now, a status after a delay, or no answer at all (the connection is held until the sender gives up). */
export type Answer = number | { readonly status: number; readonly delayMs: number } | "hang"

export interface Receiver {
  readonly port: number
  /** `http://127.0.0.1:<port>/hook` */
  readonly url: string
  readonly arrivals: Array<Arrival>
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Changes how later requests are answered. */
  answer: (arrival: Arrival) => Answer
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<void>
  /** Arrivals per event id. */
  readonly countsByEvent: () => Map<string, number>
  readonly close: () => Promise<void>
}

const eventIdOf = (raw: string): string | null => {
  try {
    const id = (JSON.parse(raw) as { id?: unknown }).id
    return typeof id === "string" ? id : null
  } catch {
    return null
  }
}

export const startReceiver = (answer: Receiver["answer"] = () => 200): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    const arrivals: Array<Arrival> = []
    const sockets = new Set<Socket>()
    const waiters: Array<{ count: number; done: () => void }> = []
    let connections = 0
    const server = createServer((req, res: ServerResponse) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const rawBody = Buffer.concat(chunks).toString("utf8")
        const arrival: Arrival = {
          n: arrivals.length + 1,
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          rawBody,
          eventId: eventIdOf(rawBody),
          arrivedAt: Date.now(),
          answered: null,
          abandonedAt: null
        }
        arrivals.push(arrival)
        res.on("close", () => {
          if (arrival.answered === null && !res.writableFinished) arrival.abandonedAt = Date.now()
        })
        for (const w of waiters.filter((w) => arrivals.length >= w.count)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.done()
        }
        const how = receiver.answer(arrival)
        if (how === "hang") return
        const reply = (status: number) => {
          if (res.destroyed || req.socket.destroyed) return
          arrival.answered = status
          res.writeHead(status, { "content-type": "text/plain" }).end("ok")
        }
        if (typeof how === "number") reply(how)
        else setTimeout(() => reply(how.status), how.delayMs)
      })
    })
    server.on("connection", (socket) => {
      connections++
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.on("error", reject)
    const receiver: Receiver = {
      port: 0,
      url: "",
      arrivals,
      connections: () => connections,
      answer,
      waitFor: (count, timeoutMs = 20_000) =>
        new Promise((done, fail) => {
          if (arrivals.length >= count) return done()
          const timer = setTimeout(() => fail(new Error(`receiver: ${arrivals.length} of ${count} requests after ${timeoutMs} ms`)), timeoutMs)
          waiters.push({ count, done: () => (clearTimeout(timer), done()) })
        }),
      countsByEvent: () => {
        const counts = new Map<string, number>()
        for (const a of arrivals) counts.set(a.eventId ?? "(none)", (counts.get(a.eventId ?? "(none)") ?? 0) + 1)
        return counts
      },
      close: () =>
        new Promise<void>((done) => {
          for (const s of sockets) s.destroy()
          server.close(() => done())
        })
    }
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      Object.assign(receiver, { port, url: `http://127.0.0.1:${port}/hook` })
      resolve(receiver)
    })
  })

/** The `t=` of an `X-Service-Signature` header. */
export const signedAt = (header: string | string[] | undefined): number => {
  const match = /(?:^|,)t=(\d+)(?:,|$)/.exec(String(header))
  if (match === null) throw new Error(`no t= in signature header ${String(header)}`)
  return Number(match[1])
}

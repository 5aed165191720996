// Called through the module objects at request time (not bound at import), as other code that wraps node's
// HTTP client (msw's interceptors in the tests, APM agents) expects.
import http, { type ClientRequest, type IncomingMessage } from "node:http"
import https from "node:https"
import { Effect } from "effect"

/** What a POST was answered with: the status, and the body read as JSON (`undefined` when it was not JSON). */
export interface JsonAnswer {
  readonly status: number
  readonly body: unknown
}

/** Why a POST got no answer to read: no answer within the time limit, no connection or a broken one, or an answer too large. */
export type NoAnswer = "timeout" | "unreachable" | "too_large"

/** How a POST may be repeated. */
export interface PostOptions {
  /**
   * Send the request once more, on a new connection, when a kept-alive connection is reset before any answer.
   * Only for a request whose second copy does no harm should the server have received the first (a verify).
   */
  readonly resendOnReset: boolean
}

/** Answers larger than this are not read: a verify or settle answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1 << 20

/** Redirects that keep the method and body (307, 308) are followed this many times; others are answers. */
const MAX_REDIRECTS = 3

/**
 * POSTs JSON with node's own HTTP client over kept-alive connections. A facilitator is asked twice per
 * purchase, and `fetch` (undici's WHATWG layer: Request/Response objects, web streams, an AbortSignal per
 * call) costs about three times the CPU of a plain `http.request` for the same exchange (measured in the
 * README). The time limit covers the whole exchange, redirects and body included, and is kept by a timer of
 * its own, so it holds inside an uninterruptible region too (a settle runs in one).
 */
export const makeJsonPoster = () => {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }

  const post = (url: string, json: string, timeoutMs: number, options: PostOptions): Effect.Effect<JsonAnswer, NoAnswer> =>
    Effect.async<JsonAnswer, NoAnswer>((resume) => {
      const body = Buffer.from(json, "utf8")
      let current: ClientRequest | undefined
      let done = false
      const finish = (outcome: Effect.Effect<JsonAnswer, NoAnswer>) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resume(outcome)
      }
      const timer = setTimeout(() => {
        current?.destroy()
        finish(Effect.fail("timeout"))
      }, timeoutMs)

      const send = (target: URL, redirects: number, resent = false) => {
        const secure = target.protocol === "https:"
        const req = (secure ? https : http).request(target, {
          method: "POST",
          // A resend takes a connection of its own: the pool's other idle ones may be just as dead.
          agent: resent ? false : secure ? agents.https : agents.http,
          headers: { "content-type": "application/json", "content-length": body.length, accept: "application/json" }
        })
        current = req
        let answered = false
        req.on("error", (e: NodeJS.ErrnoException) => {
          // Most likely a kept-alive connection the server had just closed: the request went out on a dead
          // socket. Sent once more, on a new connection (node's documented pattern), where the caller says a
          // second copy is harmless: the server may, rarely, have received the first.
          if (options.resendOnReset && !answered && !resent && !done && req.reusedSocket && (e.code === "ECONNRESET" || e.code === "EPIPE")) {
            return send(target, redirects, true)
          }
          finish(Effect.fail("unreachable"))
        })
        req.on("response", (res: IncomingMessage) => {
          answered = true
          const status = res.statusCode ?? 0
          const location = res.headers.location
          if ((status === 307 || status === 308) && location !== undefined && redirects < MAX_REDIRECTS) {
            res.resume()
            const next = URL.canParse(location, target.href) ? new URL(location, target) : null
            if (next === null || (next.protocol !== "http:" && next.protocol !== "https:")) return finish(Effect.succeed({ status, body: undefined }))
            return send(next, redirects + 1)
          }
          const chunks: Array<Buffer> = []
          let size = 0
          res.on("data", (chunk: Buffer) => {
            size += chunk.length
            if (size > MAX_ANSWER_BYTES) {
              req.destroy()
              return finish(Effect.fail("too_large"))
            }
            chunks.push(chunk)
          })
          res.on("error", () => finish(Effect.fail("unreachable")))
          res.on("aborted", () => finish(Effect.fail("unreachable")))
          res.on("end", () => {
            let parsed: unknown
            try {
              parsed = JSON.parse(Buffer.concat(chunks, size).toString("utf8"))
            } catch {
              parsed = undefined
            }
            finish(Effect.succeed({ status, body: parsed }))
          })
        })
        req.end(body)
      }

      if (!URL.canParse(url)) {
        finish(Effect.fail("unreachable"))
        return
      }
      send(new URL(url), 0)
      return Effect.sync(() => {
        current?.destroy()
        done = true
        clearTimeout(timer)
      })
    })

  return { post }
}

import { request } from "node:http"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import type { Reply } from "./app.js"

/**
 * A request to the test server from another client address. Per-client limits key on the socket's peer
 * (X-Forwarded-For is not trusted), and on Linux all of 127.0.0.0/8 is loopback: binding the client socket
 * to 127.0.0.2, 127.0.0.3, … makes each a distinct client to the server.
 */
export const callFrom = (
  localAddress: string,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string> } = {}
) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.async<Reply>((resume) => {
      const { port } = server.address as HttpServer.TcpAddress
      const body = options.body === undefined ? undefined : JSON.stringify(options.body)
      const req = request({
        host: "127.0.0.1",
        port,
        localAddress,
        method,
        path,
        agent: false,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown
          try {
            json = text === "" ? undefined : JSON.parse(text)
          } catch {
            json = undefined
          }
          const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v)]))
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers, text, json }))
        })
      })
      req.on("error", (e) => resume(Effect.die(e)))
      req.end(body)
    }))

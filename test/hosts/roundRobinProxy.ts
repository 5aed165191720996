/*
 * A loopback round-robin HTTP proxy in front of several hosts, as a load balancer would be: each request goes
 * to the next host in turn; a host that refuses the connection is skipped (as a balancer's health check would
 * soon do), and a host that dies mid-request costs that request a 502. Its upstream connections leave from
 * `from` (any 127.x address), so a test can give the proxy's clients their own client address; with
 * `forwardFor` on it appends its client's address to `X-Forwarded-For` instead, as a load balancer does.
 */
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface RoundRobinProxy {
  readonly url: string
  /** Which host answered each request, in order (index into the hosts). */
  readonly routed: Array<number>
  /** Which host each request was sent to, in order, at the moment it was sent. */
  readonly dispatched: Array<number>
  /** Upstream source address (the client address the hosts see, unless they trust it as a proxy). */
  from: string
  /** Append the client's own address to `X-Forwarded-For` (after any the client sent), as a load balancer does. */
  forwardFor: boolean
  readonly close: () => Promise<void>
}

export const startRoundRobinProxy = (hosts: ReadonlyArray<string>, port = 0): Promise<RoundRobinProxy> =>
  new Promise((resolve, reject) => {
    let next = 0
    const routed: Array<number> = []
    const dispatched: Array<number> = []
    const server: Server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = Buffer.concat(chunks)
        const attempt = (tries: number) => {
          const index = next++ % hosts.length
          const target = new URL(hosts[index]!)
          dispatched.push(index)
          const sent = req.headers["x-forwarded-for"]
          const headers = proxy.forwardFor
            ? { ...req.headers, "x-forwarded-for": [sent, req.socket.remoteAddress].filter(Boolean).join(", ") }
            : req.headers
          const upstream = request(
            { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, localAddress: proxy.from, agent: false },
            (answer) => {
              routed.push(index)
              res.writeHead(answer.statusCode ?? 502, answer.headers)
              answer.pipe(res)
              answer.on("error", () => res.destroy())
            }
          )
          upstream.on("error", (e: NodeJS.ErrnoException) => {
            if (e.code === "ECONNREFUSED" && tries < hosts.length) return attempt(tries + 1)
            if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`proxy: ${e.code ?? e.message}`)
            else res.destroy()
          })
          upstream.end(body)
        }
        attempt(1)
      })
    })
    const proxy: RoundRobinProxy = {
      url: "",
      routed,
      dispatched,
      from: "127.0.0.1",
      forwardFor: false,
      close: () => new Promise((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
    }
    server.on("error", reject)
    server.listen(port, "127.0.0.1", () => {
      ;(proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve(proxy)
    })
  })

/**
 * The reference peer for paid purchases (bench/workers.ts): Express 5 guarded by `@x402/express`'s
 * `paymentMiddleware`, selling one route that answers a small static body, against the given facilitator.
 * It keeps nothing: no sale is recorded, no limit counted, no goods fetched. `WORKERS` processes on one port
 * through node:cluster, as repomarket's `WORKERS` does.
 *
 *   PORT=… FACILITATOR_URL=… REQUIREMENT='<x402 v2 accepts entry as JSON>' ROUTE=/paid WORKERS=1 tsx bench/peer-express.ts
 */
import cluster from "node:cluster"
import { x402ExpressApp } from "./x402ExpressPeer.js"

const workers = Number(process.env["WORKERS"] ?? "1")
const port = Number(process.env["PORT"])
const route = process.env["ROUTE"] ?? "/paid"
const requirement = JSON.parse(process.env["REQUIREMENT"] ?? "{}")
const BODY = Buffer.alloc(512, 7)

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork()
  process.on("SIGTERM", () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM")
    process.exit(0)
  })
} else {
  const app = x402ExpressApp({
    route, requirement, facilitatorUrl: process.env["FACILITATOR_URL"]!,
    description: "bench: the reference peer", mimeType: "application/octet-stream", body: BODY
  })
  app.listen(port, "127.0.0.1")
}

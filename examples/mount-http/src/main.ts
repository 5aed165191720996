/**
 * An app that already has a server and its own routes adds repomarket under `/market`: the market's links
 * (checkout URLs, sign-in links) carry the prefix because its public origin does. Then the same application
 * as a web-standard `(Request) => Promise<Response>` handler, what Hono, Next.js route handlers, Bun and Deno take.
 * (Express: `app.use("/market", market.handle)`; Express strips the prefix itself.)
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeNodeHandler, makeWebHandler, withPathPrefix } from "repomarket/http"
import { memoryPorts } from "repomarket/testing"

const repos = [{ owner: "octo-org", name: "widget", files: { "README.md": "# Widget\n" } }]
const listing = { host_url: "https://github.com/octo-org/widget", price_usd: "3.00", wallet_base: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }

// The app's own routes.
const ownRoutes = (req: IncomingMessage, res: ServerResponse) => {
  if (req.url === "/hello") return void res.writeHead(200, { "content-type": "text/plain" }).end("hello from the host app")
  res.writeHead(404).end()
}

// Listen first (port 0: any free one), then tell the market where it lives.
let market: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined
const server = createServer((req, res) => market?.(req, res) || ownRoutes(req, res))
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const node = await makeNodeHandler(memoryPorts({ baseUrl: `${origin}/market`, repos }))
market = withPathPrefix("/market", node.handle)

try {
  console.log("own route:", (await fetch(`${origin}/hello`)).status, await (await fetch(`${origin}/hello`)).text())
  const listed = await fetch(`${origin}/market/repos`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(listing) })
  const { test_checkout_url } = await listed.json() as { test_checkout_url: string }
  console.log("listed under /market:", listed.status, test_checkout_url)
  const quote = await fetch(test_checkout_url)
  console.log("checkout:", quote.status, quote.headers.get("payment-required") === null ? "no challenge" : "x402 challenge")
  console.log("health:", (await fetch(`${origin}/market/healthz`)).status)
} finally {
  await new Promise((resolve) => server.close(resolve))
  await node.dispose()
}

// The same application as a web-standard handler (here called directly; Bun.serve({ fetch: web }) serves it).
const web = makeWebHandler(memoryPorts({ baseUrl: "https://shop.example", repos }))
try {
  const listed = await web(new Request("https://shop.example/repos", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(listing) }))
  const { test_checkout_url } = await listed.json() as { test_checkout_url: string }
  console.log("web handler listed:", listed.status, test_checkout_url)
  const quote = await web(new Request(test_checkout_url))
  console.log("web handler checkout:", quote.status)
} finally {
  await web.dispose()
}

/*
 * The chains' JSON-RPC endpoints of test/support/chainRpc.ts on a real loopback HTTP server (node:http on
 * 127.0.0.1, port 0), for server processes a test starts: msw intercepts only its own process. The same
 * handlers answer (through msw's `getResponse`), so `chain` says what both kinds of test see.
 */
import { createServer } from "node:http"
import { getResponse } from "msw"
import { chainRpcHandlers } from "./chainRpc.js"

export interface ChainRpcServer {
  /** BASE_RPC_URL for the processes. */
  readonly baseUrl: string
  /** SOLANA_RPC_URL for the processes. */
  readonly solanaUrl: string
  readonly close: () => Promise<void>
}

export const startChainRpcServer = async (): Promise<ChainRpcServer> => {
  let origin = ""
  let handlers: ReturnType<typeof chainRpcHandlers> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const request = new Request(`${origin}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers: Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : [])),
        ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {})
      })
      getResponse(handlers, request).then(
        async (answer) => {
          if (answer === undefined) return void res.writeHead(404, { "content-type": "text/plain" }).end("no such RPC endpoint")
          res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
        },
        (e: unknown) => void res.writeHead(500, { "content-type": "text/plain" }).end(String(e))
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const baseUrl = `${origin}/base/KEY`
  const solanaUrl = `${origin}/solana/KEY`
  handlers = chainRpcHandlers(baseUrl, solanaUrl)
  return {
    baseUrl,
    solanaUrl,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, type Layer } from "effect"
import { loadPlatformNode } from "../node/PlatformNode.js"
import { type AppPorts, buildApp } from "./AppRuntime.js"

/** A `node:http` request listener; Express and Connect take it as middleware too. */
export type NodeRequestHandler = (request: IncomingMessage, response: ServerResponse) => void

/** A Node handler of the repomarket application, with what it holds released by `dispose`. */
export interface RepomarketNodeHandler {
  /** The request listener to give `http.createServer`, Express or Connect. */
  readonly handle: NodeRequestHandler
  /** Releases the application's resources (database pool, timers). Close your server first. */
  readonly dispose: () => Promise<void>
}

/**
 * The repomarket application as a `node:http` request listener over the given ports, built before the
 * promise resolves (so a bad setting fails here, not on the first request). The caller's address for the
 * per-client limits is the socket's peer. In Express, `app.use("/market", handle)` mounts it under a prefix
 * (Express strips the prefix from `req.url`); with plain `node:http`, see {@link withPathPrefix}.
 * Needs the optional peer dependency `@effect/platform-node` (`npm install @effect/platform-node`); without it
 * the promise rejects saying so.
 */
export const makeNodeHandler = async <E>(ports: Layer.Layer<AppPorts, E>): Promise<RepomarketNodeHandler> => {
  const { NodeHttpServer } = await loadPlatformNode()
  const { app, runtime } = await buildApp(ports, NodeHttpServer.layerContext)
  const handle = await runtime.runPromise(Effect.map(NodeHttpServer.makeHandler(app), (h): NodeRequestHandler => h))
  return { handle, dispose: () => runtime.dispose() }
}

/**
 * Serves `handle` under `prefix` (e.g. `/market`) of an existing `node:http` server: a request under the prefix
 * reaches it with the prefix removed from its URL and the function returns true; any other request is left
 * alone and it returns false, for the server's own routes.
 *
 * @example
 * ```ts
 * createServer((req, res) => market(req, res) || ownRoutes(req, res))
 * ```
 */
export const withPathPrefix = (prefix: string, handle: NodeRequestHandler) => {
  const base = prefix.replace(/\/+$/, "")
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const url = request.url ?? "/"
    const rest = url.slice(base.length)
    if (!url.startsWith(base) || (rest !== "" && rest[0] !== "/" && rest[0] !== "?")) return false
    request.url = rest === "" || rest[0] === "?" ? `/${rest}` : rest
    handle(request, response)
    return true
  }
}

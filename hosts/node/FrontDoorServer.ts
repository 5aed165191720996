import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ListenOptions, Socket } from "node:net"
import type { CommandExecutor, Etag, FileSystem, HttpPlatform, HttpServer, HttpServerError, Path, Terminal, Worker } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { type ConnectionLimits, ConnectionLimitsTag, DEFAULT_CONNECTION_LIMITS, limitConnections, serverOptionsOf } from "./Connections.js"
import { type HostMetrics, HostMetricsTag } from "../../app/HostMetrics.js"
import { HostLifecycle, type Lifecycle } from "../../app/Lifecycle.js"
import { nameRequest } from "../../app/RequestId.js"
import type { FrontDoorCache } from "../../app/frontdoor/Cache.js"
import { FrontDoor } from "../../app/frontdoor/Service.js"
import { PlatformNode } from "./PlatformNode.js"

/**
 * A Node server whose front door answers before the app: `request` events it answers never reach the
 * platform's handler (the one place Node lets a listener stand in front of another is `emit`). With a
 * lifecycle, every request is counted until its response closes, so a stopping host can drain. Its
 * connections are bounded as `limits` say (Connections.ts): timeouts, open connections in all and per
 * client, stalled responses; a connection refused there never reaches Node's HTTP parser.
 */
export const serverWithFrontDoor = (
  door: FrontDoorCache,
  lifecycle?: Lifecycle,
  metrics?: HostMetrics,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS
): Server => {
  const server = createServer(serverOptionsOf(limits.settings))
  const admit = limitConnections(server, limits)
  lifecycle?.attach(server)
  const emit = server.emit.bind(server) as (event: string, ...args: Array<unknown>) => boolean
  server.emit = ((event: string, ...args: Array<unknown>) => {
    if (event === "connection" && !admit(args[0] as Socket)) return true
    if (event !== "request") return emit(event, ...args)
    const [req, res] = args as [IncomingMessage, ServerResponse]
    nameRequest(req, res)
    lifecycle?.track(req, res)
    if (door.answer(req, res)) {
      metrics?.observe(req, res, "front_door")
      return true
    }
    metrics?.observe(req, res, "app")
    return emit(event, ...args)
  }) as Server["emit"]
  return server
}

/**
 * What the Node server layer provides: the HTTP server and Effect's Node platform services (`NodeContext`'s,
 * named here by their `@effect/platform` tags, so these declarations need no optional peer to type-check).
 */
export type NodeServerServices =
  | HttpServer.HttpServer
  | HttpPlatform.HttpPlatform
  | Etag.Generator
  | CommandExecutor.CommandExecutor
  | FileSystem.FileSystem
  | Path.Path
  | Terminal.Terminal
  | Worker.WorkerManager

/**
 * The Node HTTP server layer of `npm start`, with the front door in front of the app; its connection limits
 * are `ConnectionLimitsLive`'s where provided (`npm start` reads them from the environment), else the defaults.
 * Needs the optional peer dependency `@effect/platform-node`, imported when the layer is built.
 */
export const NodeServerWithFrontDoor = (options: ListenOptions): Layer.Layer<NodeServerServices, HttpServerError.ServeError, FrontDoor> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.all([PlatformNode, FrontDoor, Effect.serviceOption(HostLifecycle), Effect.serviceOption(HostMetricsTag), Effect.serviceOption(ConnectionLimitsTag)]),
      ([{ NodeHttpServer }, door, lifecycle, metrics, limits]) =>
        NodeHttpServer.layer(
          () => serverWithFrontDoor(door, Option.getOrUndefined(lifecycle), Option.getOrUndefined(metrics), Option.getOrElse(limits, () => DEFAULT_CONNECTION_LIMITS)),
          options
        )
    )
  )

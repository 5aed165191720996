import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "../http/AppLayer.js"
import { ConnectionLimitsLive } from "../http/Connections.js"
import { DeliveryWorkerLive } from "../http/DeliveryWorker.js"
import { FrontDoorLive, NodeServerWithFrontDoor } from "../http/FrontDoor.js"
import { ReconcileWorkerLive } from "../http/ReconcileWorker.js"
import type { AppPorts } from "./AppRuntime.js"

/** Where and how {@link startNodeServer} listens. */
export interface NodeServerOptions {
  /** TCP port; 0 picks a free one (read it from the result). Default 3000. */
  readonly port?: number
  /** Interface to bind; default all. */
  readonly host?: string
  /**
   * Runs the webhook delivery worker and the reconciler of pending sales beside the server, as `npm start`
   * does. Default true; turn off when another process of the same database runs them.
   */
  readonly workers?: boolean
}

/** A running server. */
export interface RunningNodeServer {
  /** The port it listens on (the chosen one when asked for 0). */
  readonly port: number
  /** `http://<host>:<port>`. */
  readonly url: string
  /** Stops accepting, waits for requests in flight and the workers, and releases every resource. */
  readonly close: () => Promise<void>
}

/**
 * Serves the repomarket application on its own Node HTTP server over the given ports, exactly as `npm start`
 * does (front door included, `RESPONSE_CACHE_MS` and the connection limits of Connections.ts read from the
 * environment). Resolves once it listens.
 */
export const startNodeServer = async <E>(ports: Layer.Layer<AppPorts, E>, options: NodeServerOptions = {}): Promise<RunningNodeServer> => {
  const workers = options.workers === false
    ? Layer.empty
    : Layer.mergeAll(
      DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default)),
      ReconcileWorkerLive.pipe(Layer.provide(Reconciler.Default), Layer.provide(Settlements.Default))
    )
  const listen = options.host === undefined ? { port: options.port ?? 3000 } : { port: options.port ?? 3000, host: options.host }
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(HttpLive, workers).pipe(
      Layer.provideMerge(NodeServerWithFrontDoor(listen)),
      Layer.provide(ConnectionLimitsLive),
      Layer.provide(FrontDoorLive),
      Layer.provide(ports)
    )
  )
  try {
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    const port = address._tag === "TcpAddress" ? address.port : 0
    const host = address._tag === "TcpAddress" ? address.hostname : "localhost"
    const shown = host.includes(":") ? `[${host}]` : host
    return { port, url: `http://${shown === "0.0.0.0" || shown === "[::]" ? "localhost" : shown}:${port}`, close: () => runtime.dispose() }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

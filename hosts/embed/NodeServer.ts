import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "../../app/AppLayer.js"
import { ConnectionLimitsLive } from "../node/Connections.js"
import { DeliveryWorkerLive } from "../workers/DeliveryWorker.js"
import { FrontDoorLive } from "../../app/FrontDoor.js"
import { NodeServerWithFrontDoor } from "../node/FrontDoorServer.js"
import { ReconcileWorkerLive } from "../workers/ReconcileWorker.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
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

/** `http://<host>:<port>` of a listening server; `localhost` where it listens on every interface. */
const urlOf = (address: HttpServer.Address): string => {
  if (address._tag !== "TcpAddress") return "http://localhost"
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
  return `http://${host === "0.0.0.0" || host === "[::]" ? "localhost" : host}:${address.port}`
}

/**
 * The ports' public origin, unless it is only a default (`memoryPorts()` without `baseUrl`, no `BASE_URL`):
 * then the address the server listens on, so that checkout and sign-in links name the port it bound.
 */
const OriginOfBoundServer = Layer.effect(
  PublicOrigin,
  Effect.gen(function*() {
    const given = yield* PublicOrigin
    if (given.isDefault !== true) return given
    return { baseUrl: urlOf((yield* HttpServer.HttpServer).address) }
  })
)

/**
 * Serves the repomarket application on its own Node HTTP server over the given ports, exactly as `npm start`
 * does (front door included, `RESPONSE_CACHE_MS` and the connection limits of Connections.ts read from the
 * environment). Resolves once it listens. Links (checkouts, sign-in) are built from the ports' public origin,
 * or, when that is only a default (`memoryPorts()` without `baseUrl`), from the address it listens on.
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
      Layer.provide(OriginOfBoundServer),
      Layer.provideMerge(NodeServerWithFrontDoor(listen)),
      Layer.provide(ConnectionLimitsLive),
      Layer.provide(FrontDoorLive),
      Layer.provide(ports)
    )
  )
  try {
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    const port = address._tag === "TcpAddress" ? address.port : 0
    return { port, url: urlOf(address), close: () => runtime.dispose() }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

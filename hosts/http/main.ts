import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "./AppLayer.js"
import { isClusterPrimary, runPrimary, workersFromEnv } from "./Cluster.js"
import { ConnectionLimitsLive } from "./Connections.js"
import { DeliveryWorkerLive } from "./DeliveryWorker.js"
import { FrontDoorFollowsOtherHosts, FrontDoorLive, NodeServerWithFrontDoor } from "./FrontDoor.js"
import { DefaultPorts } from "./DefaultPorts.js"
import { DrainOnShutdown, HostLifecycleLive } from "./Lifecycle.js"
import { ReconcileWorkerLive } from "./ReconcileWorker.js"
import { type LogFormat, LogFormatLive, logFormatFromEnv, primaryLine } from "./LogFormat.js"
import { HostMetricsLive, metricsFromEnv, type MetricsSettings, serveClusterMetrics } from "./Metrics.js"
import { checkProductionSettings } from "./ProductionGuard.js"
import { LogLevelFromConfig, port } from "./Settings.js"

// The Node server with its front door (repo-page JSON and 402 challenges answered from memory).
const ServerLive = Layer.unwrapEffect(Effect.map(port, (p) => NodeServerWithFrontDoor({ port: p })))

/**
 * One server process: the app, plus beside it the webhook delivery worker that drains the outbox, the
 * reconciler that resolves sales left pending by a settle with no answer (from the chain), and the front
 * door's follower of other hosts' writes. DrainOnShutdown is outermost, so a SIGTERM drains the server first.
 */
const serve = () =>
  DrainOnShutdown.pipe(
    Layer.provide(Layer.mergeAll(
      HttpLive,
      DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default)),
      ReconcileWorkerLive.pipe(Layer.provide(Reconciler.Default), Layer.provide(Settlements.Default)),
      FrontDoorFollowsOtherHosts
    )),
    Layer.provide(ServerLive),
    // Timeouts and connection caps of the server (HEADERS_TIMEOUT_MS, MAX_CONNECTIONS...; Connections.ts).
    Layer.provide(ConnectionLimitsLive),
    Layer.provide(FrontDoorLive),
    Layer.provide(DefaultPorts),
    Layer.provide(HostLifecycleLive),
    Layer.provide(HostMetricsLive(metrics)),
    Layer.provide(LogLevelFromConfig),
    Layer.launch,
    Effect.scoped,
    Effect.tapErrorCause(Effect.logError),
    // Outermost, so that a start-up failure is written in the chosen format too.
    Effect.provide(LogFormatLive(logFormat)),
    (program) => NodeRuntime.runMain(program, { disablePrettyLogger: logFormat === "json" })
  )

let workers: number
let metrics: MetricsSettings | null
let logFormat: LogFormat
try {
  // First: a production start without its secrets stops here, before any database or key file is made.
  checkProductionSettings()
  workers = workersFromEnv()
  metrics = metricsFromEnv()
  logFormat = logFormatFromEnv()
} catch (e) {
  console.error((e as Error).message)
  process.exit(1)
}
// With WORKERS above 1 this process only supervises (Cluster.ts) and serves the workers' summed metrics;
// each worker runs `serve`.
if (isClusterPrimary(workers)) {
  if (metrics === null) runPrimary(workers, logFormat)
  else {
    const at = metrics
    // Listening first: a metrics port that is taken stops start-up before any worker is forked.
    serveClusterMetrics(at).then(
      () => {
        console.log(primaryLine(logFormat, `metrics of all workers at http://${at.host}:${at.port}/metrics`))
        runPrimary(workers, logFormat)
      },
      (e: unknown) => {
        console.error((e as Error).message)
        process.exit(1)
      }
    )
  }
} else serve()

import cluster from "node:cluster"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "../../app/AppLayer.js"
import { bannerFacts, printBanner } from "./Banner.js"
import { tellPrimaryAnswering, tellPrimaryFatal } from "./Cluster.js"
import { ConnectionLimitsLive } from "./Connections.js"
import { DeliveryWorkerLive } from "../workers/DeliveryWorker.js"
import { fatalLines } from "./FatalErrors.js"
import { FrontDoorFollowsOtherHosts, FrontDoorLive } from "../../app/FrontDoor.js"
import { NodeServerWithFrontDoor } from "./FrontDoorServer.js"
import { DefaultPorts } from "./NodePorts.js"
import { DrainOnShutdown, HostLifecycleLive } from "../../app/Lifecycle.js"
import { ReconcileWorkerLive } from "../workers/ReconcileWorker.js"
import { LogFormatLive } from "./LogFormat.js"
import { printFatal } from "./LogLines.js"
import { HostMetricsLive } from "./Metrics.js"
import { LogLevelFromConfig } from "../Settings.js"
import type { StartSettings } from "./StartChecks.js"

/*
 * One server process of `npm start`, loaded by main.ts once the settings it checks are right: the app, plus
 * beside it the webhook delivery worker that drains the outbox, the reconciler that resolves sales left
 * pending by a settle with no answer (from the chain), and the front door's follower of other hosts' writes.
 * DrainOnShutdown is outermost, so a SIGTERM drains the server first. Once everything is built (the server
 * answers), it prints the start-up banner (Banner.ts), or, as a cluster's worker, tells the primary, which
 * prints it once for all. If it cannot start, or stops on a failure, it says why once (FatalErrors.ts).
 */

/** Says why the process stops: on its own output, or, as a cluster's worker, to the primary. */
const sayWhy = (settings: StartSettings, lines: ReadonlyArray<string>) =>
  lines.length === 0
    ? Effect.void
    : cluster.isWorker
    ? Effect.promise(() => tellPrimaryFatal(lines))
    : Effect.sync(() => printFatal(settings.logFormat, lines))

export const serve = (settings: StartSettings): void =>
  DrainOnShutdown.pipe(
    Layer.provide(Layer.mergeAll(
      HttpLive,
      DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default)),
      ReconcileWorkerLive.pipe(Layer.provide(Reconciler.Default), Layer.provide(Settlements.Default)),
      FrontDoorFollowsOtherHosts
    )),
    // The Node server with its front door (repo-page JSON and 402 challenges answered from memory).
    Layer.provide(NodeServerWithFrontDoor({ port: settings.port })),
    // Timeouts and connection caps of the server (HEADERS_TIMEOUT_MS, MAX_CONNECTIONS...; Connections.ts).
    Layer.provide(ConnectionLimitsLive),
    Layer.provide(FrontDoorLive),
    Layer.provide(DefaultPorts),
    Layer.provide(HostLifecycleLive),
    Layer.provide(HostMetricsLive(settings.metrics)),
    Layer.provide(LogLevelFromConfig),
    // Built, so answering: say so, then serve until stopped.
    (layer) =>
      Layer.build(layer).pipe(
        Effect.zipRight(Effect.sync(() =>
          cluster.isWorker ? tellPrimaryAnswering() : printBanner(bannerFacts(process.env, settings), settings.logFormat)
        )),
        Effect.zipRight(Effect.never),
        Effect.scoped
      ),
    // Why it stopped, once (the runtime's own report is off below): then exit 1.
    Effect.tapErrorCause((cause) => sayWhy(settings, fatalLines(cause, process.env, settings.port))),
    // Outermost, so that what is logged while stopping is written in the chosen format too.
    Effect.provide(LogFormatLive(settings.logFormat)),
    (program) => NodeRuntime.runMain(program, { disablePrettyLogger: settings.logFormat === "json", disableErrorReporting: true })
  )

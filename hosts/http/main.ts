import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Reconciler } from "../../domain/usecases/Reconciler.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "./AppLayer.js"
import { DeliveryWorkerLive } from "./DeliveryWorker.js"
import { FrontDoorLive, NodeServerWithFrontDoor } from "./FrontDoor.js"
import { DefaultPorts } from "./DefaultPorts.js"
import { ReconcileWorkerLive } from "./ReconcileWorker.js"
import { port } from "./Settings.js"

// The Node server with its front door (repo-page JSON and 402 challenges answered from memory).
const ServerLive = Layer.unwrapEffect(Effect.map(port, (p) => NodeServerWithFrontDoor({ port: p })))

// The server, plus beside it the webhook delivery worker that drains the outbox and the reconciler that
// resolves sales left pending by a settle with no answer (from the chain).
Layer.mergeAll(
  HttpLive,
  DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default)),
  ReconcileWorkerLive.pipe(Layer.provide(Reconciler.Default), Layer.provide(Settlements.Default))
).pipe(
  Layer.provide(ServerLive),
  Layer.provide(FrontDoorLive),
  Layer.provide(DefaultPorts),
  Layer.launch,
  Effect.scoped,
  Effect.tapErrorCause(Effect.logError),
  NodeRuntime.runMain
)

import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "./AppLayer.js"
import { DeliveryWorkerLive } from "./DeliveryWorker.js"
import { DefaultPorts } from "./DefaultPorts.js"
import { port } from "./Settings.js"

const ServerLive = Layer.unwrapEffect(
  Effect.map(port, (p) => NodeHttpServer.layer(createServer, { port: p }))
)

// The server, plus the webhook delivery worker that drains the outbox beside it.
Layer.merge(HttpLive, DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default))).pipe(
  Layer.provide(ServerLive),
  Layer.provide(DefaultPorts),
  Layer.launch,
  Effect.scoped,
  Effect.tapErrorCause(Effect.logError),
  NodeRuntime.runMain
)

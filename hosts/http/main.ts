import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpLive } from "./AppLayer.js"
import { DefaultPorts } from "./DefaultPorts.js"
import { port } from "./Settings.js"

const ServerLive = Layer.unwrapEffect(
  Effect.map(port, (p) => NodeHttpServer.layer(createServer, { port: p }))
)

HttpLive.pipe(
  Layer.provide(ServerLive),
  Layer.provide(DefaultPorts),
  Layer.launch,
  Effect.scoped,
  Effect.tapErrorCause(Effect.logError),
  NodeRuntime.runMain
)

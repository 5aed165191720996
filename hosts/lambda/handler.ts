/**
 * The AWS Lambda entry point for API Gateway HTTP API (payload format 2.0) and Function URL events:
 * the HTTP host's application (same API layer, routes and guard) over the production ports, built once per
 * instance at module scope. SAM/esbuild entry: `hosts/lambda/handler.ts`, handler `handler.handler`.
 */
import { makeLambdaHandler } from "./LambdaApp.js"
import { Layer } from "effect"
import { LambdaPortsLive } from "./LambdaPorts.js"
import { PackagesBesideBundle, ScalarBesideBundle } from "./BesideBundle.js"

export const handler = makeLambdaHandler(Layer.merge(LambdaPortsLive.pipe(Layer.provide(PackagesBesideBundle)), ScalarBesideBundle))

// Build during the init phase (full CPU, not billed against the first request's latency). A failure here
// stops the instance with a message naming the missing setting; Lambda retries the init on the next event.
await handler.ready()

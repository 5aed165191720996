/**
 * The AWS Lambda entry point for the EventBridge schedule that delivers `sale.settled` webhooks from the
 * outbox (the HTTP host runs a worker for this; a Lambda instance only runs while invoked).
 * SAM/esbuild entry: `hosts/lambda/scheduled.ts`, handler `scheduled.handler`.
 */
import { Layer } from "effect"
import { PackagesBesideBundle } from "./BesideBundle.js"
import { LambdaPortsLive } from "./LambdaPorts.js"
import { makeScheduledHandler } from "./ScheduledDelivery.js"

export const handler = makeScheduledHandler(LambdaPortsLive.pipe(Layer.provide(PackagesBesideBundle)))

await handler.ready()

/**
 * The AWS Lambda handlers: the HTTP application for API Gateway HTTP API (payload 2.0) and Function URL
 * events, and the scheduled function that reconciles pending sales and delivers webhooks. Importing this
 * builds nothing; `repomarket/lambda/handler` and `repomarket/lambda/scheduled` are the ready-made entry
 * modules over the production ports (they build during Lambda's init phase).
 *
 * @packageDocumentation
 */
export type { HttpEventV2, HttpResultV2, LambdaContext, ScheduledEvent } from "../hosts/lambda/Events.js"
export { type AdapterOptions, fromWebHandler, RESPONSE_PAYLOAD_LIMIT, type WebHandler } from "../hosts/lambda/EventAdapter.js"
export { type LambdaHandlerOptions, type LambdaHttpHandler, LambdaSourceIp, makeLambdaHandler } from "../hosts/lambda/LambdaApp.js"
export { checkLambdaSettings, LAMBDA_REQUIRED_SETTINGS, LambdaPortsLive } from "../hosts/lambda/LambdaPorts.js"
export {
  type DeliveryOptions,
  type DeliveryPorts,
  type DeliverySummary,
  makeScheduledHandler,
  type ScheduledHandler,
  type ScheduledSummary
} from "../hosts/lambda/ScheduledDelivery.js"
export { type LambdaStreamingHandler, makeLambdaStreamingHandler, runtimeAwsLambda } from "../hosts/lambda/LambdaStreaming.js"
export {
  type AwsLambdaGlobal,
  fromWebHandlerStreaming,
  type ResponseStreamMetadata,
  STREAMED_RESPONSE_LIMIT,
  StreamedResponseTooLarge,
  type StreamingEventHandler,
  type StreamingOptions
} from "../hosts/lambda/StreamingAdapter.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { AppPorts, StoragePorts } from "../app/AppLayer.js"
export type { HttpEventHandler } from "../hosts/lambda/EventAdapter.js"
export type * from "./PortTypes.js"
export type { Reconciler } from "../domain/usecases/Reconciler.js"
export type { Settlements } from "../domain/usecases/Settlements.js"
export type { Webhooks } from "../domain/usecases/Webhooks.js"
export type { ReconcileSummary } from "../domain/usecases/Reconciler.js"

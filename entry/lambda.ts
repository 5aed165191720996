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
export type { AppPorts } from "../app/AppLayer.js"
export type { HttpEventHandler } from "../hosts/lambda/EventAdapter.js"
export type { AccountStore } from "../ports/AccountStore.js"
export type { Chains } from "../ports/Chains.js"
export type { CodeHost } from "../ports/CodeHost.js"
export type { CodeHostIdentity } from "../ports/CodeHostIdentity.js"
export type { CredentialStore } from "../ports/CredentialStore.js"
export type { ListingCatalog } from "../ports/ListingCatalog.js"
export type { ListingStore } from "../ports/ListingStore.js"
export type { Mailer } from "../ports/Mailer.js"
export type { Outbox } from "../ports/Outbox.js"
export type { Packager } from "../ports/Packager.js"
export type { PaymentFacilitator } from "../ports/PaymentFacilitator.js"
export type { PublicOrigin } from "../ports/PublicOrigin.js"
export type { RateLimiter } from "../ports/RateLimiter.js"
export type { ReceiptSigner } from "../ports/ReceiptSigner.js"
export type { SaleLedger } from "../ports/SaleLedger.js"
export type { SecretBox } from "../ports/SecretBox.js"
export type { SingleUse } from "../ports/SingleUse.js"
export type { Transactor } from "../ports/Transactor.js"
export type { WalletProof } from "../ports/WalletProof.js"
export type { WebhookSender } from "../ports/WebhookSender.js"
export type { Reconciler } from "../usecases/Reconciler.js"
export type { Settlements } from "../usecases/Settlements.js"
export type { Webhooks } from "../usecases/Webhooks.js"

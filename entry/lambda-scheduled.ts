/**
 * The ready-made scheduled Lambda handler over the production ports (`LambdaPortsLive`): reconciles pending sales
 * and delivers `sale.settled` webhooks on each EventBridge tick. Importing it builds its runtime during Lambda's
 * init phase; point the scheduled function's handler at `handler`.
 *
 * @packageDocumentation
 */
export { handler } from "../hosts/lambda/scheduled.js"
export type { ScheduledHandler } from "../hosts/lambda/ScheduledDelivery.js"
export type { LambdaContext, ScheduledEvent } from "../hosts/lambda/Events.js"
export type { DeliverySummary, ScheduledSummary } from "../hosts/lambda/ScheduledDelivery.js"
export type { ReconcileSummary } from "../domain/usecases/Reconciler.js"

/**
 * The ready-made Lambda HTTP handler over the production ports (`LambdaPortsLive`), for API Gateway HTTP API
 * (payload 2.0) and Function URL events. Importing it builds the app during Lambda's init phase; point the
 * function's handler at `handler`. `repomarket/lambda` has the factories to build your own.
 *
 * @packageDocumentation
 */
export { handler } from "../hosts/lambda/handler.js"
export type { LambdaHttpHandler } from "../hosts/lambda/LambdaApp.js"
export type { HttpEventHandler } from "../hosts/lambda/EventAdapter.js"
export type { HttpEventV2, HttpResultV2, LambdaContext } from "../hosts/lambda/Events.js"

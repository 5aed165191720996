/**
 * The HTTP application: the `HttpApi` contract, the layers that make the app, and three ways to serve it
 * over whatever ports you give it — its own Node server ({@link startNodeServer}), a `node:http`/Express
 * request listener to mount under a path ({@link makeNodeHandler}, {@link withPathPrefix}), and a
 * web-standard `(Request) => Promise<Response>` handler ({@link makeWebHandler}).
 *
 * @packageDocumentation
 */
export { Api } from "../app/Api.js"
export { AppLive, guardedApp, HttpLive, type StoragePorts, UseCasesLive } from "../app/AppLayer.js"
export { DefaultPorts } from "../hosts/Ports.js"
export { DeliveryWorkerLive } from "../hosts/workers/DeliveryWorker.js"
export { FrontDoor, FrontDoorLive, NodeServerWithFrontDoor } from "../app/FrontDoor.js"
export { openApiDocument } from "../app/OpenApiDoc.js"
export { ReconcileWorker, ReconcileWorkerLive } from "../hosts/workers/ReconcileWorker.js"
export { PublicOriginFromConfig } from "../hosts/Settings.js"
export { type AppPorts, ClientAddress } from "../hosts/embed/AppRuntime.js"
export { makeNodeHandler, type NodeRequestHandler, type RepomarketNodeHandler, withPathPrefix } from "../hosts/embed/NodeHandler.js"
export { type NodeServerOptions, type RunningNodeServer, startNodeServer } from "../hosts/embed/NodeServer.js"
export { makeWebHandler, type RepomarketWebHandler, type WebHandlerOptions } from "../hosts/embed/WebHandler.js"

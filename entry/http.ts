/**
 * The HTTP application: the `HttpApi` contract, the layers that make the app, and three ways to serve it
 * over whatever ports you give it — its own Node server ({@link startNodeServer}), a `node:http`/Express
 * request listener to mount under a path ({@link makeNodeHandler}, {@link withPathPrefix}), and a
 * web-standard `(Request) => Promise<Response>` handler ({@link makeWebHandler}).
 *
 * @packageDocumentation
 */
export { Api } from "../hosts/http/Api.js"
export { AppLive, guardedApp, HttpLive, type StoragePorts, UseCasesLive } from "../hosts/http/AppLayer.js"
export { DefaultPorts } from "../hosts/http/DefaultPorts.js"
export { DeliveryWorkerLive } from "../hosts/http/DeliveryWorker.js"
export { FrontDoor, FrontDoorLive, NodeServerWithFrontDoor } from "../hosts/http/FrontDoor.js"
export { openApiDocument } from "../hosts/http/OpenApiDoc.js"
export { ReconcileWorker, ReconcileWorkerLive } from "../hosts/http/ReconcileWorker.js"
export { PublicOriginFromConfig } from "../hosts/http/Settings.js"
export { type AppPorts, ClientAddress } from "../hosts/embed/AppRuntime.js"
export { makeNodeHandler, type NodeRequestHandler, type RepomarketNodeHandler, withPathPrefix } from "../hosts/embed/NodeHandler.js"
export { type NodeServerOptions, type RunningNodeServer, startNodeServer } from "../hosts/embed/NodeServer.js"
export { makeWebHandler, type RepomarketWebHandler, type WebHandlerOptions } from "../hosts/embed/WebHandler.js"

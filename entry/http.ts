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
export { DefaultPorts } from "../hosts/node/NodePorts.js"
export { DeliveryWorkerLive } from "../hosts/workers/DeliveryWorker.js"
export { FrontDoor, FrontDoorLive } from "../app/FrontDoor.js"
export { NodeServerWithFrontDoor, type NodeServerServices } from "../hosts/node/FrontDoorServer.js"
export { openApiDocument } from "../app/OpenApiDoc.js"
export { ReconcileWorker, ReconcileWorkerLive } from "../hosts/workers/ReconcileWorker.js"
export { PublicOriginFromConfig } from "../hosts/Settings.js"
export { type AppPorts, ClientAddress } from "../hosts/embed/AppRuntime.js"
export { makeNodeHandler, type NodeRequestHandler, type RepomarketNodeHandler, withPathPrefix } from "../hosts/embed/NodeHandler.js"
export { type NodeServerOptions, type RunningNodeServer, startNodeServer } from "../hosts/embed/NodeServer.js"
export { makeWebHandler, type RepomarketWebHandler, type WebHandlerOptions } from "../hosts/embed/WebHandler.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { EmbeddedDatabaseError } from "../adapters/sql/DataDirLock.js"
export type * from "./PortTypes.js"
export type { Accounts } from "../domain/usecases/Accounts.js"
export type { Auth } from "../domain/usecases/Auth.js"
export type { Catalog } from "../domain/usecases/Catalog.js"
export type { Dashboard } from "../domain/usecases/Dashboard.js"
export type { HostConnection } from "../domain/usecases/HostConnection.js"
export type { Listings } from "../domain/usecases/Listings.js"
export type { Purchases } from "../domain/usecases/Purchases.js"
export type { Reconciler } from "../domain/usecases/Reconciler.js"
export type { Redownloads } from "../domain/usecases/Redownloads.js"
export type { Settlements } from "../domain/usecases/Settlements.js"
export type { Sitemap } from "../domain/usecases/Sitemap.js"
export type { Storefront } from "../domain/usecases/Storefront.js"
export type { Webhooks } from "../domain/usecases/Webhooks.js"

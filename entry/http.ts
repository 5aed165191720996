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

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { EmbeddedDatabaseError } from "../adapters/sql/DataDirLock.js"
export type { AccountStore } from "../ports/AccountStore.js"
export type { Chains } from "../ports/Chains.js"
export type { ChangeFeed } from "../ports/ChangeFeed.js"
export type { CodeHost } from "../ports/CodeHost.js"
export type { CodeHostIdentity } from "../ports/CodeHostIdentity.js"
export type { CredentialStore } from "../ports/CredentialStore.js"
export type { HealthCheck } from "../ports/HealthCheck.js"
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
export type { Accounts } from "../usecases/Accounts.js"
export type { Auth } from "../usecases/Auth.js"
export type { Catalog } from "../usecases/Catalog.js"
export type { Dashboard } from "../usecases/Dashboard.js"
export type { HostConnection } from "../usecases/HostConnection.js"
export type { Listings } from "../usecases/Listings.js"
export type { Purchases } from "../usecases/Purchases.js"
export type { Reconciler } from "../usecases/Reconciler.js"
export type { Redownloads } from "../usecases/Redownloads.js"
export type { Settlements } from "../usecases/Settlements.js"
export type { Sitemap } from "../usecases/Sitemap.js"
export type { Storefront } from "../usecases/Storefront.js"
export type { Webhooks } from "../usecases/Webhooks.js"

import { HttpApiBuilder, HttpServer, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import type { AccountStore } from "../ports/AccountStore.js"
import type { CredentialStore } from "../ports/CredentialStore.js"
import type { ListingCatalog } from "../ports/ListingCatalog.js"
import type { ListingStore } from "../ports/ListingStore.js"
import type { Outbox } from "../ports/Outbox.js"
import type { SaleLedger } from "../ports/SaleLedger.js"
import type { SingleUse } from "../ports/SingleUse.js"
import type { Transactor } from "../ports/Transactor.js"
import type { Chains } from "../ports/Chains.js"
import type { CodeHost } from "../ports/CodeHost.js"
import type { CodeHostIdentity } from "../ports/CodeHostIdentity.js"
import type { Mailer } from "../ports/Mailer.js"
import type { Packager } from "../ports/Packager.js"
import type { PaymentFacilitator } from "../ports/PaymentFacilitator.js"
import type { RateLimiter } from "../ports/RateLimiter.js"
import type { ReceiptSigner } from "../ports/ReceiptSigner.js"
import type { SecretBox } from "../ports/SecretBox.js"
import type { WalletProof } from "../ports/WalletProof.js"
import type { WebhookSender } from "../ports/WebhookSender.js"
import { UseCasesLive } from "../domain/usecases/UseCases.js"
import { Api } from "./Api.js"
import { FrontDoor, InvalidatingStorage, rememberAnswers } from "./FrontDoor.js"
import { guard } from "./Guard.js"
import { behindTrustedProxies, TrustedProxiesConfig } from "./TrustedProxies.js"
import { healthz } from "./Lifecycle.js"
import { allowedMethodsOf, routeTemplatesOf } from "./RouteTable.js"
import { HostMetricsTag } from "./HostMetrics.js"
import { AccountHandlers, KeysHandlers } from "./handlers/AccountHandlers.js"
import { AuthHandlers } from "./handlers/AuthHandlers.js"
import { ListingCreateHandlers, ListingsHandlers } from "./handlers/ListingHandlers.js"
import { CatalogHandlers } from "./handlers/CatalogHandlers.js"
import { CatalogGateLive } from "./handlers/CatalogLimits.js"
import { CheckoutHandlers } from "./handlers/CheckoutHandlers.js"
import { PagesHandlers } from "./handlers/PageHandlers.js"
import { SalesHandlers } from "./handlers/SalesHandlers.js"
import { AuthenticationLive, OptionalAuthenticationLive } from "./handlers/SecurityLive.js"
import { PublicOrigin } from "../ports/PublicOrigin.js"
import { openApiDocument } from "./OpenApiDoc.js"
import { McpRoutesLive } from "./mcp/McpRoute.js"
import { DocsRoutesLive } from "./pages/Docs.js"
import { PageRoutesLive } from "./pages/PageRoutes.js"
import { PageSessions } from "./pages/Session.js"
import { WellKnownKeysLive } from "./pages/WellKnownKeys.js"
import { ProvenanceRoutesLive } from "./pages/ProvenanceRoute.js"
import { verifyPage } from "./pages/VerifyPage.js"

/** The storage ports, whatever their technology. */
export type StoragePorts = ListingStore | ListingCatalog | AccountStore | CredentialStore | SaleLedger | Outbox | Transactor | SingleUse

export { UseCasesLive }

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    AuthHandlers,
    KeysHandlers,
    AccountHandlers,
    ListingCreateHandlers,
    ListingsHandlers,
    SalesHandlers,
    PagesHandlers,
    CatalogHandlers,
    CheckoutHandlers
  ]),
  Layer.provide([AuthenticationLive, OptionalAuthenticationLive])
)

/** Plain routes beside the API: the sign-in page, the OpenAPI document, a health check (see Lifecycle). */
const RoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* PublicOrigin
    // Derived from the Api on the first request, not at start-up (a cold start's work otherwise), then kept.
    const spec = yield* Effect.cached(Effect.sync(() => openApiDocument(baseUrl)))
    yield* router.get("/auth/verify", verifyPage)
    yield* router.get("/openapi.json", Effect.flatMap(spec, (document) => HttpServerResponse.json(document)))
    yield* router.get("/healthz", healthz)
  })
)

/** The HTTP application: API, routes, HTML pages and docs, over use cases that still need their ports. */
export const AppLive = Layer.mergeAll(RoutesLive, PageRoutesLive, DocsRoutesLive, McpRoutesLive, WellKnownKeysLive, ProvenanceRoutesLive).pipe(
  Layer.provideMerge(ApiLive),
  Layer.provide(PageSessions.Default),
  // One catalog gate for the process: the HTTP catalog and the MCP search share its slots.
  Layer.provide(CatalogGateLive),
  // Writes through the use cases forget the front door's remembered answers (where there is a front door).
  Layer.provide(UseCasesLive.pipe(Layer.provide(InvalidatingStorage)))
)

/**
 * The application as one HttpApp wrapped by the guard (body checks, problem+json, access log), read from the
 * client's address behind `TRUSTED_PROXIES` when set, and, where
 * the host has a front door (`npm start`), by the step that remembers the answers it may serve.
 */
export const guardedApp = Effect.gen(function*() {
  const router = yield* HttpApiBuilder.Router.router
  const guarded = guard(yield* HttpApiBuilder.httpApp, allowedMethodsOf(router.routes))
  // Where the host keeps metrics, requests are named by the route they took (never by their path).
  const metrics = yield* Effect.serviceOption(HostMetricsTag)
  if (Option.isSome(metrics)) metrics.value.useRoutes(routeTemplatesOf(router.routes))
  // Behind load balancers (TRUSTED_PROXIES), per-client limits count the client, not the balancer.
  const proxies = yield* TrustedProxiesConfig
  const app = Option.isSome(proxies) ? behindTrustedProxies(guarded, proxies.value) : guarded
  const door = yield* Effect.serviceOption(FrontDoor)
  return Option.isSome(door) ? rememberAnswers(app, door.value) : app
})

/** Serves the application. The guard wraps the app itself: `serve`'s own middleware runs too late to shape responses. */
export const HttpLive = Layer.unwrapEffect(Effect.map(guardedApp, (app) => HttpServer.serve(app))).pipe(
  Layer.provide(AppLive),
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
)

/** Every port the application is written against: what a host must provide (`DefaultPorts`, `memoryPorts()`, yours). */
export type AppPorts =
  | StoragePorts
  | Chains
  | CodeHost
  | CodeHostIdentity
  | Mailer
  | Packager
  | PaymentFacilitator
  | PublicOrigin
  | RateLimiter
  | ReceiptSigner
  | SecretBox
  | WalletProof
  | WebhookSender

/** What `AppLive` needs besides the router: `AppPorts` must stay exactly that (checked when this file compiles). */
type Needed = Exclude<Layer.Layer.Context<typeof AppLive>, HttpApiBuilder.Router | HttpApiBuilder.Middleware>
const appPortsAreWhatTheAppNeeds: [Needed] extends [AppPorts] ? [AppPorts] extends [Needed] ? true : never : never = true
void appPortsAreWhatTheAppNeeds

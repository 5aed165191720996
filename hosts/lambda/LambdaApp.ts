import { HttpApiBuilder, HttpApp, HttpServer, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { AppLive, type AppPorts, guardedApp } from "../../app/AppLayer.js"
import { type AdapterOptions, fromWebHandler, type HttpEventHandler, type WebHandler } from "./EventAdapter.js"
import { type PerInstance, perInstance } from "./PerInstance.js"

export type { AppPorts }

/**
 * The caller's address for one invocation, from `requestContext.http.sourceIp`: API Gateway and Function
 * URLs fill it from the connection, not from a header, so it is as trustworthy as a socket's peer.
 */
export class LambdaSourceIp extends Context.Tag("repomarket/LambdaSourceIp")<LambdaSourceIp, string>() {}

/**
 * Makes the invocation's source IP the request's `remoteAddress`, which is what the app's per-client
 * limits read (app/handlers/ClientAddress.ts). No header is involved, so a caller cannot set it.
 */
export const withSourceIp = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(Effect.serviceOption(LambdaSourceIp), (ip) =>
    Option.match(ip, {
      onNone: () => app,
      onSome: (address) => Effect.updateService(app, HttpServerRequest.HttpServerRequest, (req) => req.modify({ remoteAddress: address }))
    }))

/** The platform services the HTTP host's server layer would otherwise provide. */
const PlatformLive = Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)


/** The HTTP application of the HTTP host (same API, routes, guard) over the given ports. */
export const appLayer = <E>(ports: Layer.Layer<AppPorts, E>) =>
  Layer.mergeAll(AppLive.pipe(Layer.provideMerge(PlatformLive)), HttpServer.layerContext).pipe(Layer.provide(ports))

/** The buffered Lambda HTTP handler, with control over its application's lifetime. */
export interface LambdaHttpHandler extends HttpEventHandler {
  /** Builds the application now (at module load, during Lambda's init phase); rejects with why it cannot start. */
  readonly ready: () => Promise<void>
  /** Releases the database pool and other resources (tests; Lambda simply freezes the instance). */
  readonly dispose: () => Promise<void>
}

/** Options of `makeLambdaHandler`. */
export type LambdaHandlerOptions = AdapterOptions

/**
 * The HTTP application as a web handler, built once per instance (layers, database pool, migrations, the
 * HttpApp) on the first call or `get()`, and reused by every invocation. Both Lambda handlers, buffered and
 * streaming, sit on it.
 */
export const makeInstanceWebHandler = <E>(ports: Layer.Layer<AppPorts, E>): PerInstance<WebHandler> =>
  perInstance(Effect.gen(function*() {
    const runtime = yield* Layer.toRuntime(appLayer(ports))
    const app = yield* Effect.provide(guardedApp, runtime)
    const handle = HttpApp.toWebHandlerRuntime(runtime)(withSourceIp(app))
    const web: WebHandler = (request, event) => handle(request, Context.make(LambdaSourceIp, event.requestContext.http.sourceIp))
    return web
  }))

/**
 * The Lambda handler for API Gateway HTTP API (payload 2.0) and Function URL events, over the given ports.
 * The application (layers, database pool, migrations, the HttpApp and its web handler) is built once per
 * instance, on the first call or `ready()`, and reused by every invocation.
 */
export const makeLambdaHandler = <E>(ports: Layer.Layer<AppPorts, E>, options: LambdaHandlerOptions = {}): LambdaHttpHandler => {
  const instance = makeInstanceWebHandler(ports)
  const handler = fromWebHandler((request, event) => instance.get().then((web) => web(request, event)), options)
  return Object.assign(handler, { ready: () => instance.get().then(() => undefined), dispose: instance.dispose })
}

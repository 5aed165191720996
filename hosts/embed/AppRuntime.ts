import { HttpApiBuilder, type HttpApp, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, ManagedRuntime, Option } from "effect"
import { AppLive, type AppPorts, guardedApp } from "../../app/AppLayer.js"

export type { AppPorts }


/**
 * The caller's address for one request where no socket tells it (a web-standard handler): what the per-client
 * limits count by. Set by the embedder from something it trusts (its platform's connection info), never a header.
 */
export class ClientAddress extends Context.Tag("repomarket/ClientAddress")<ClientAddress, string>() {}

/** Makes `ClientAddress`, when given, the request's `remoteAddress` (what app/handlers/ClientAddress.ts reads). */
export const withClientAddress = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(Effect.serviceOption(ClientAddress), (address) =>
    Option.match(address, {
      onNone: () => app,
      onSome: (ip) => Effect.updateService(app, HttpServerRequest.HttpServerRequest, (req) => req.modify({ remoteAddress: ip }))
    }))

/**
 * The application (API, routes, pages, guard) built once over `ports` plus a platform layer, kept in a
 * runtime the embedder disposes of. Resolves to the guarded HttpApp and the runtime that runs it.
 */
export const buildApp = async <E, P, PE>(ports: Layer.Layer<AppPorts, E>, platform: Layer.Layer<P, PE>) => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(AppLive.pipe(Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer))), platform).pipe(
      Layer.provide(ports)
    )
  )
  try {
    const app = await runtime.runPromise(guardedApp)
    return { app, runtime }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}

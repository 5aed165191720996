import { HttpApp, HttpServer } from "@effect/platform"
import { Context, type Layer } from "effect"
import { type AppPorts, buildApp, ClientAddress, withClientAddress } from "./AppRuntime.js"

/** How the web-standard handler learns what it cannot see in a `Request`. */
export interface WebHandlerOptions {
  /**
   * The caller's address for the per-client limits (payment attempts, public pages), from the platform's own
   * connection info (Bun's `server.requestIP`, Deno's `info.remoteAddr`, a trusted proxy's header). Without
   * it every caller counts as one ("unknown").
   */
  readonly clientAddress?: (request: Request) => string | undefined
}

/** A web-standard handler, as Hono, Next.js route handlers, Bun.serve, Deno.serve and Workers take it. */
export interface RepomarketWebHandler {
  /** Answers one web-standard request with the repomarket application. */
  (request: Request): Promise<Response>
  /** Builds the application now (it is built on the first request otherwise); rejects with why it cannot start. */
  readonly ready: () => Promise<void>
  /** Releases what the application holds (database pool, timers); the handler must not be called afterwards. */
  readonly dispose: () => Promise<void>
}

/**
 * The repomarket application as `(Request) => Promise<Response>` over the given ports: the same API, pages
 * and guard as `npm start`, without its Node front door. Mounted under a path prefix, strip the prefix from
 * the URL before calling it and set the ports' public origin (`PublicOrigin`) to the prefixed URL.
 *
 * @example
 * ```ts
 * const handle = makeWebHandler(memoryPorts({ baseUrl: "https://shop.example" }))
 * Bun.serve({ fetch: handle })
 * ```
 */
export const makeWebHandler = <E>(ports: Layer.Layer<AppPorts, E>, options: WebHandlerOptions = {}): RepomarketWebHandler => {
  let built: ReturnType<typeof build> | undefined
  const build = () =>
    buildApp(ports, HttpServer.layerContext).then(({ app, runtime }) =>
      runtime.runtime().then((rt) => ({ handle: HttpApp.toWebHandlerRuntime(rt)(withClientAddress(app)), runtime }))
    )
  const get = () => {
    built ??= build().catch((error: unknown) => {
      built = undefined
      throw error
    })
    return built
  }
  const handler = async (request: Request): Promise<Response> => {
    const { handle } = await get()
    const address = options.clientAddress?.(request)
    return address === undefined ? handle(request) : handle(request, Context.make(ClientAddress, address))
  }
  return Object.assign(handler, {
    ready: () => get().then(() => undefined),
    dispose: async () => {
      const current = built
      built = undefined
      if (current !== undefined) await (await current).runtime.dispose()
    }
  })
}

import { HttpApp, HttpServerRequest } from "@effect/platform"
import { Config, Context, Effect, FiberRef, Layer, Option, Runtime } from "effect"
import { type FrontDoorCache, makeFrontDoor } from "./Cache.js"

/** The front door of a Node host. Hosts without one (Lambda, most tests) answer everything in the app. */
export class FrontDoor extends Context.Tag("hosts/http/FrontDoor")<FrontDoor, FrontDoorCache>() {}

/** `RESPONSE_CACHE_MS` (default 2000; 0 turns it off). Access-log lines go through the Effect logger. */
export const FrontDoorLive = Layer.effect(
  FrontDoor,
  Effect.gen(function*() {
    const ttlMs = yield* Config.integer("RESPONSE_CACHE_MS").pipe(
      Config.withDefault(2000),
      Config.validate({ message: "RESPONSE_CACHE_MS must be a whole number of milliseconds from 0 to 60000", validation: (n) => n >= 0 && n <= 60_000 })
    )
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string) => Runtime.runSync(runtime)(Effect.logInfo(line))
    return makeFrontDoor({ ttlMs, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024, log })
  })
)

/** Wraps the whole app (outside the guard): remembers the answers the front door may serve. */
export const rememberAnswers = <E, R>(app: HttpApp.Default<E, R>, door: FrontDoorCache): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
    const key = door.keyOf(req.method, req.url, req.headers)
    if (key === null) return app
    const generation = door.generation()
    // What the client gets is the response after the pre-response handlers the request registered (the
    // pages' `Vary: Accept`, for one): the platform applies them after the app, so remember it as they make it.
    return Effect.tap(app, (response) =>
      Effect.flatMap(FiberRef.get(HttpApp.currentPreResponseHandlers), (handler) =>
        Option.isNone(handler)
          ? Effect.sync(() => door.remember(key, generation, response))
          : handler.value(req, response).pipe(
            Effect.tap((final) => door.remember(key, generation, final)),
            Effect.ignore
          )))
  })

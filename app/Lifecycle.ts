import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { HttpServerResponse } from "@effect/platform"
import { Config, Context, Effect, Layer, Option } from "effect"
import { HealthCheck } from "../ports/HealthCheck.js"
import { PROBLEM_CONTENT_TYPE, problemBody } from "./Problem.js"
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailableProblem } from "./Unavailable.js"

/*
 * What a load balancer and a process manager need from a Node host: a health answer that says whether this
 * host can serve (its database answers, it is not shutting down), and a graceful stop on SIGTERM — stop
 * accepting connections, answer what is in flight (a purchase between settle and delivery must finish, not
 * die half-way), stop claiming background work, then let the layers close.
 */

/** The host's in-flight requests and whether it is shutting down. */
export interface Lifecycle {
  readonly draining: () => boolean
  /** Counts a request until its response closes; during a drain its connection is not kept alive. */
  readonly track: (req: IncomingMessage, res: ServerResponse) => void
  /** The Node server to close when draining. */
  readonly attach: (server: Server) => void
  /** Stops accepting, waits until nothing is in flight (at most `timeoutMs`). */
  readonly drain: (timeoutMs: number) => Effect.Effect<void>
  readonly inFlight: () => number
}

export class HostLifecycle extends Context.Tag("repomarket/HostLifecycle")<HostLifecycle, Lifecycle>() {}

export const makeLifecycle = (): Lifecycle => {
  let draining = false
  let inFlight = 0
  const servers: Array<Server> = []
  return {
    draining: () => draining,
    inFlight: () => inFlight,
    attach: (server) => void servers.push(server),
    track: (_req, res) => {
      inFlight++
      if (draining) res.setHeader("connection", "close")
      res.once("close", () => inFlight--)
    },
    drain: (timeoutMs) =>
      Effect.gen(function*() {
        draining = true
        for (const server of servers) {
          // Stops accepting; idle keep-alive connections go now, busy ones after their answer (above).
          if (server.listening) server.close()
          server.closeIdleConnections()
        }
        const until = Date.now() + timeoutMs
        while (inFlight > 0 && Date.now() < until) {
          yield* Effect.sleep(25)
          for (const server of servers) server.closeIdleConnections()
        }
        if (inFlight > 0) yield* Effect.logWarning(`Shutting down with ${inFlight} requests still in flight after ${timeoutMs} ms`)
      })
  }
}

/** `SHUTDOWN_TIMEOUT_MS`: longest a SIGTERM waits for in-flight requests (default 45 s: a settle may take 30). */
export const shutdownTimeoutMs = Config.integer("SHUTDOWN_TIMEOUT_MS").pipe(
  Config.withDefault(45_000),
  Config.validate({ message: "SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds from 0 to 600000", validation: (n) => n >= 0 && n <= 600_000 })
)

export const HostLifecycleLive = Layer.sync(HostLifecycle, makeLifecycle)

/**
 * Outermost layer of the Node host: when the host stops (SIGTERM, SIGINT), its finalizer runs first, so the
 * server drains while the app, its workers and the database pool are all still there.
 */
export const DrainOnShutdown = Layer.scopedDiscard(
  Effect.gen(function*() {
    const lifecycle = yield* HostLifecycle
    const timeoutMs = yield* shutdownTimeoutMs
    yield* Effect.addFinalizer(() =>
      Effect.logInfo("Shutting down: no new connections, finishing requests in flight").pipe(
        Effect.zipRight(lifecycle.drain(timeoutMs)),
        Effect.zipRight(Effect.logInfo("Requests drained"))
      )
    )
  })
)


const problem = (status: number, body: ReturnType<typeof problemBody>, retryAfter: number) =>
  HttpServerResponse.unsafeJson(body, {
    status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "retry-after": String(retryAfter), "cache-control": "no-store" }
  })

/**
 * `GET /healthz`: 200 `{ ok: true }` (with `database: "reachable"` where there is a database to ask); 503
 * `database_unavailable` when the database does not answer, 503 `shutting_down` while draining.
 */
export const healthz = Effect.gen(function*() {
  const lifecycle = yield* Effect.serviceOption(HostLifecycle)
  if (Option.isSome(lifecycle) && lifecycle.value.draining()) {
    return problem(503, problemBody(503, "shutting_down", "Service shutting down", "This host is shutting down; another one will answer.", { retry_after_seconds: 1 }), 1)
  }
  const check = yield* Effect.serviceOption(HealthCheck)
  if (Option.isNone(check)) return HttpServerResponse.unsafeJson({ ok: true })
  return (yield* check.value.databaseReachable)
    ? HttpServerResponse.unsafeJson({ ok: true, database: "reachable" })
    : problem(503, databaseUnavailableProblem(), DATABASE_RETRY_AFTER_SECONDS)
})

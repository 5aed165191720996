import cluster from "node:cluster"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { Effect, Layer, Metric, MetricState } from "effect"
import { AggregatorRegistry, collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client"
import { COUNTED_FACTS } from "../../domain/Metrics.js"
import { type HostMetrics, HostMetricsTag } from "../../app/HostMetrics.js"
import type { MetricsSettings } from "./MetricsSettings.js"
import type { RouteTemplateOf } from "../../app/RouteTable.js"

/*
 * Prometheus metrics of the Node host, for operators running several hosts: each process counts its requests
 * (route, method, status, whether the front door or the app answered, and how long they took), the use
 * cases' facts (sales settled and failed, webhook attempts: domain/Metrics.ts) and Node's own (CPU, memory,
 * event-loop delay, GC: prom-client's defaults). Served on a port of its own, off by default, bound to
 * loopback unless told otherwise: per-host traffic and sales are the operator's, not the public's, so the
 * public port never answers `/metrics`. With `WORKERS` above 1 the cluster's primary serves the sum over its
 * workers (asked over the cluster's IPC channel at each scrape), so one scrape per machine sees all of it.
 * Labels are taken from fixed sets (route templates, never paths; no ids or addresses), so no request can
 * create a new series.
 */

// Read before the app is loaded (main.ts), so kept in a module without Effect or prom-client.
export { metricsFromEnv, type MetricsSettings } from "./MetricsSettings.js"

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** Seconds; from a front-door answer (tens of µs) to a settle the facilitator takes its time over. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** The use cases' counters (Effect metrics) as prom-client reads a metric at each scrape. */
const registerCountedFacts = (registry: Registry) => {
  for (const fact of COUNTED_FACTS) {
    const read = () => ({
      name: fact.name,
      help: fact.help,
      type: "counter" as const,
      aggregator: "sum" as const,
      values: Metric.unsafeSnapshot().flatMap((pair) =>
        pair.metricKey.name === fact.name && MetricState.isCounterState(pair.metricState)
          ? [{ value: Number(pair.metricState.count), labels: Object.fromEntries(pair.metricKey.tags.map((t) => [t.key, t.value])) }]
          : []
      )
    })
    // prom-client reads any object with these members as a metric.
    registry.registerMetric({ name: fact.name, help: fact.help, type: "counter", aggregator: "sum", get: async () => read(), reset: () => {} } as never)
  }
}

/** A process's metrics: a registry of its own (not prom-client's global one), so embedding apps keep theirs. */
export const makeHostMetrics = (): HostMetrics => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  registerCountedFacts(registry)
  const requests = new Counter({
    name: "repomarket_http_requests_total",
    help: "HTTP requests, by route template, method, status (or aborted: the connection closed before the answer ended) and which part answered (front_door or app).",
    labelNames: ["route", "method", "status", "answered_by"] as const,
    registers: [registry]
  })
  const durations = new Histogram({
    name: "repomarket_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer, by route template and which part answered.",
    labelNames: ["route", "answered_by"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  let templateOf: RouteTemplateOf = () => undefined
  return {
    registry,
    useRoutes: (f) => {
      templateOf = f
    },
    observe: (req, res, answeredBy) => {
      const started = performance.now()
      res.once("close", () => {
        const route = templateOf(req.url ?? "/") ?? "other"
        const method = METHODS.has(req.method ?? "") ? req.method! : "other"
        // A connection that closed before the answer ended (the client left, or never sent all of its body)
        // is `aborted`, not the 200 Node presets on every response.
        const status = res.writableFinished ? String(res.statusCode) : "aborted"
        requests.inc({ route, method, status, answered_by: answeredBy })
        durations.observe({ route, answered_by: answeredBy }, (performance.now() - started) / 1000)
      })
    }
  }
}

/** What `/metrics` answers: the text and its content type. */
type Exposition = () => Promise<{ readonly body: string; readonly contentType: string }>

/**
 * The metrics listener: `GET /metrics` (and HEAD) only. Resolves once it listens; rejects (a port taken, an
 * address not on this machine) with an Error naming the settings.
 */
export const listenForScrapes = (settings: MetricsSettings, expose: Exposition): Promise<Server> => {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]
    if (path !== "/metrics") return void res.writeHead(404, { "content-type": "text/plain" }).end("Not found: metrics are at /metrics\n")
    if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("Method not allowed\n")
    expose().then(
      ({ body, contentType }) => res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : body),
      (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`Metrics could not be gathered: ${e instanceof Error ? e.message : String(e)}\n`)
    )
  })
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => reject(new Error(`METRICS_PORT ${settings.port} on ${settings.host}: ${e.message}`))
    server.once("error", failed)
    server.listen(settings.port, settings.host, () => {
      server.off("error", failed)
      resolve(server)
    })
  })
}

/**
 * The cluster primary's `/metrics`: the sum over the workers (counters and histograms added up; Node's gauges
 * as prom-client's defaults aggregate them). Returns once listening; errors (port taken) reject.
 */
export const serveClusterMetrics = (settings: MetricsSettings): Promise<Server> => {
  const aggregator = new AggregatorRegistry()
  return listenForScrapes(settings, async () => ({ body: await aggregator.clusterMetrics(), contentType: aggregator.contentType }))
}

/**
 * A server process's metrics (`METRICS_PORT` set): provides HostMetricsTag, and either serves `/metrics`
 * itself (one process) or answers its cluster primary's requests (a worker). Off: provides nothing.
 */
export const HostMetricsLive = (settings: MetricsSettings | null): Layer.Layer<never> | Layer.Layer<HostMetricsTag> => {
  if (settings === null) return Layer.empty
  return Layer.scoped(
    HostMetricsTag,
    Effect.gen(function*() {
      const metrics = makeHostMetrics()
      if (cluster.isWorker) {
        // Answers the primary's scrape requests (prom-client's cluster protocol) with this registry.
        AggregatorRegistry.setRegistries([metrics.registry])
        void new AggregatorRegistry()
      } else {
        yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () => listenForScrapes(settings, async () => ({ body: await metrics.registry.metrics(), contentType: metrics.registry.contentType })),
            catch: (e) => e as Error
          }),
          (server) =>
            Effect.async<void>((resume) => {
              server.close(() => resume(Effect.void))
              // A scraper's kept-alive connection would hold the close until it times out.
              server.closeAllConnections()
            })
        ).pipe(Effect.orDie)
        yield* Effect.logInfo(`Metrics at http://${settings.host}:${settings.port}/metrics`)
      }
      return metrics
    })
  )
}

import type { IncomingMessage, ServerResponse } from "node:http"
import { Context } from "effect"
import type { Registry } from "prom-client"
import type { RouteTemplateOf } from "./RouteTable.js"

/*
 * What the server and the app need of the host's metrics (hosts/node/Metrics.ts keeps them with prom-client):
 * only this, so that hosts which never keep metrics (Lambda) do not load prom-client.
 */

/** Which part of the host answered a request. */
export type AnsweredBy = "front_door" | "app"

/** One process's metrics. */
export interface HostMetrics {
  /** This process's registry (what `/metrics` shows, or what a worker hands its primary). */
  readonly registry: Registry
  /** Counts the request once its answer is done (sent, or cut off). */
  readonly observe: (req: IncomingMessage, res: ServerResponse, answeredBy: AnsweredBy) => void
  /** Names requests by the app's route table from now on (until then every request is `other`). */
  readonly useRoutes: (templateOf: RouteTemplateOf) => void
}

/** The process's metrics, where the host keeps them (`METRICS_PORT` set). */
export class HostMetricsTag extends Context.Tag("repomarket/HostMetrics")<HostMetricsTag, HostMetrics>() {}

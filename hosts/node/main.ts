/*
 * `npm start`. First every setting that can be judged here is checked — the production guard, PORT,
 * DATABASE_URL's scheme, LOG_LEVEL, LOG_FORMAT, WORKERS, METRICS_PORT, and whether the ports are free — with
 * nothing loaded but these small modules: a wrong value stops start-up within a second, one line each on
 * stderr, exit 1, before any database or key file is made. Only then is the app loaded (Serve.ts, which takes
 * seconds) or, with WORKERS above 1, the cluster started (this process supervises; each worker runs Serve).
 */
import cluster from "node:cluster"
import { bannerFacts, printBanner } from "./Banner.js"
import { isClusterPrimary, runPrimary } from "./Cluster.js"
import { primaryLine } from "./LogLines.js"
import { checkPortsFree, checkStartSettings, SettingsRefused, type StartSettings } from "./StartChecks.js"

const refuse = (lines: ReadonlyArray<string>): never => {
  for (const line of new Set(lines)) console.error(line)
  process.exit(1)
}

let settings: StartSettings
try {
  settings = checkStartSettings()
} catch (e) {
  settings = refuse(e instanceof SettingsRefused ? e.lines : [(e as Error).message])
}
// A cluster's workers share the port their primary listens on: only the primary (or a lone process) checks it.
if (cluster.isPrimary) {
  const taken = await checkPortsFree(settings)
  if (taken.length > 0) refuse(taken)
}

if (isClusterPrimary(settings.workers)) {
  const { logFormat, metrics, workers } = settings
  const announce = () => printBanner(bannerFacts(process.env, settings), logFormat, { role: "primary" })
  if (metrics === null) runPrimary(workers, logFormat, announce)
  else {
    // The summed metrics of the workers, served by the primary (Metrics.ts: loaded only here).
    const { serveClusterMetrics } = await import("./Metrics.js")
    await serveClusterMetrics(metrics).catch((e: unknown) => refuse([(e as Error).message]))
    console.log(primaryLine(logFormat, `metrics of all workers at http://${metrics.host}:${metrics.port}/metrics`))
    runPrimary(workers, logFormat, announce)
  }
} else {
  const { serve } = await import("./Serve.js")
  serve(settings)
}

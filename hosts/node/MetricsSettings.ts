/** Where `/metrics` is served: `METRICS_PORT` (off when unset) on `METRICS_HOST` (default 127.0.0.1). */
export interface MetricsSettings {
  readonly port: number
  readonly host: string
}

/**
 * `METRICS_PORT` and `METRICS_HOST` from the environment (read directly, as the cluster's primary never builds
 * the Effect app): null when metrics are off, an Error naming the setting when a value is wrong.
 */
export const metricsFromEnv = (env: NodeJS.ProcessEnv = process.env): MetricsSettings | null => {
  const raw = (env["METRICS_PORT"] ?? "").trim()
  if (raw === "" || raw.toLowerCase() === "off") return null
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(port >= 1 && port <= 65_535)) throw new Error(`METRICS_PORT must be a port number from 1 to 65535, or off (got ${JSON.stringify(raw)})`)
  const publicPort = Number((env["PORT"] ?? "").trim() || "3000")
  if (port === publicPort) throw new Error(`METRICS_PORT must differ from PORT (${publicPort}): metrics are never served on the public port`)
  const host = (env["METRICS_HOST"] ?? "").trim() || "127.0.0.1"
  return { port, host }
}

import { createServer } from "node:net"
import { workersFromEnv } from "./Cluster.js"
import { type LogFormat, logFormatFromEnv } from "./LogLines.js"
import { metricsFromEnv, type MetricsSettings } from "./MetricsSettings.js"
import { checkProductionSettings } from "./ProductionGuard.js"

/*
 * The settings `npm start` checks before anything starts: before the app is loaded (which takes seconds),
 * before the embedded database opens, before any key file is written. Nothing here imports Effect or the app,
 * so a wrong value is refused within a second of start. Each failure is one line: the setting, what is wrong
 * with its value and what is accepted. A value is shown only where it is no secret (PORT, LOG_LEVEL...):
 * never a URL that may carry a password (DATABASE_URL shows its scheme at most).
 */

/** The settings main.ts reads itself; the rest are read by the app's layers as they are built. */
export interface StartSettings {
  /** `PORT` (default 3000). */
  readonly port: number
  /** `WORKERS` (default 1): see Cluster.ts. */
  readonly workers: number
  /** `METRICS_PORT`, `METRICS_HOST`: see Metrics.ts. */
  readonly metrics: MetricsSettings | null
  /** `LOG_FORMAT`: see LogFormat.ts. */
  readonly logFormat: LogFormat
}

/** Why start-up stops: one line per setting that is wrong. */
export class SettingsRefused extends Error {
  constructor(readonly lines: ReadonlyArray<string>) {
    super(lines.join("\n"))
  }
}

/** A value as the line shows it: as typed when it is short and plain, else quoted (and cut). */
const shown = (raw: string): string => (/^[\x21-\x7e]{1,40}$/.test(raw) ? raw : JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw))

/** `PORT`, as Effect's `Config.port` (which the app reads too) takes it: a whole number from 1 to 65535, as written. */
export const portFromEnv = (env: NodeJS.ProcessEnv = process.env): number => {
  const raw = env["PORT"]
  if (raw === undefined) return 3000
  const port = Number(raw)
  if (!/^\d+$/.test(raw) || String(port) !== raw || port < 1 || port > 65_535) {
    throw new Error(`PORT=${shown(raw)}: not a port number (1–65535)`)
  }
  return port
}

/**
 * `DATABASE_URL`, when set: a PostgreSQL URL. Anything else (a MySQL URL, a path, a typo) would otherwise
 * reach the PostgreSQL driver and fail late and obscurely. Its value is never shown: it may hold a password.
 */
export const checkDatabaseUrl = (env: NodeJS.ProcessEnv = process.env): void => {
  const raw = (env["DATABASE_URL"] ?? "").trim()
  if (raw === "") return
  const example = "postgres://user:password@host:5432/dbname"
  if (!URL.canParse(raw)) throw new Error(`DATABASE_URL: not a URL (expected one like ${example})`)
  const scheme = new URL(raw).protocol
  if (scheme !== "postgres:" && scheme !== "postgresql:") {
    const named = /^[a-z][a-z0-9+.-]{0,20}:$/i.test(scheme) ? ` (got ${scheme}//…)` : ""
    throw new Error(`DATABASE_URL: only postgres:// or postgresql:// URLs${named}, like ${example}`)
  }
}

/** The names `LOG_LEVEL` takes, in any case (Effect's log levels: `Config.logLevel`, which the app reads). */
export const LOG_LEVELS = ["ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"] as const

/** `LOG_LEVEL`, when set: one of {@link LOG_LEVELS}, in any case. */
export const checkLogLevel = (env: NodeJS.ProcessEnv = process.env): void => {
  const raw = env["LOG_LEVEL"]
  if (raw === undefined || (LOG_LEVELS as ReadonlyArray<string>).includes(raw.toUpperCase())) return
  throw new Error(`LOG_LEVEL=${shown(raw)}: not one of ${LOG_LEVELS.map((l) => l.toLowerCase()).join(", ")} (any case)`)
}

/**
 * Every setting that can be judged without the network, the production guard first. Throws
 * {@link SettingsRefused} naming all that are wrong, one line each.
 */
export const checkStartSettings = (env: NodeJS.ProcessEnv = process.env): StartSettings => {
  const lines: Array<string> = []
  const check = <A>(read: () => A): A | undefined => {
    try {
      return read()
    } catch (e) {
      lines.push((e as Error).message)
      return undefined
    }
  }
  check(() => checkProductionSettings(env))
  const port = check(() => portFromEnv(env))
  check(() => checkDatabaseUrl(env))
  check(() => checkLogLevel(env))
  const logFormat = check(() => logFormatFromEnv(env))
  const workers = check(() => workersFromEnv(env))
  const metrics = check(() => metricsFromEnv(env))
  if (lines.length > 0 || port === undefined || logFormat === undefined || workers === undefined || metrics === undefined) {
    throw new SettingsRefused(lines)
  }
  return { port, workers, metrics, logFormat }
}

/** Why nothing can listen on `port` (at `host`, else every interface, as the server listens), or null when it can. */
export const listenProblem = (port: number, host?: string): Promise<NodeJS.ErrnoException | null> =>
  new Promise((resolve) => {
    const probe = createServer()
    probe.once("error", (e: NodeJS.ErrnoException) => resolve(e))
    probe.listen(host === undefined ? { port } : { port, host }, () => probe.close(() => resolve(null)))
  })

/** The line naming `setting` when `port` (on `host`, if one is named) cannot be listened on, as the listen error says. */
export const portProblemLine = (setting: string, port: number, error: NodeJS.ErrnoException, host?: string): string => {
  const where = `${setting} ${port}${host === undefined ? "" : ` on ${host}`}`
  return error.code === "EADDRINUSE"
    ? `${where} is in use: another process listens on it (stop it, or set ${setting} to another port)`
    : error.code === "EACCES"
    ? `${where}: not allowed to listen on it (ports below 1024 need privileges; set ${setting} to another port)`
    : `${where}: cannot listen on it (${error.code ?? error.message})`
}

/**
 * Whether the ports `npm start` listens on are free, checked by listening on them for a moment, before the
 * app is loaded: a port in use is refused in a second, not after the database is up. Lines, or none.
 */
export const checkPortsFree = async (settings: StartSettings): Promise<ReadonlyArray<string>> => {
  const lines: Array<string> = []
  const server = await listenProblem(settings.port)
  if (server !== null) lines.push(portProblemLine("PORT", settings.port, server))
  if (settings.metrics !== null) {
    const metrics = await listenProblem(settings.metrics.port, settings.metrics.host)
    if (metrics !== null) lines.push(portProblemLine("METRICS_PORT", settings.metrics.port, metrics, settings.metrics.host))
  }
  return lines
}

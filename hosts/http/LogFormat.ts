import { hostname } from "node:os"
import { Layer, Logger } from "effect"

/*
 * `LOG_FORMAT`: how `npm start` writes its log. `pretty` (the default) is for a person at a terminal; `json` is
 * one JSON object per line on stdout, for a log shipper collecting several hosts: each line names its `host`
 * (the machine's hostname) and `pid` (the process: with WORKERS, several per machine), beside `time`, `level`,
 * `message`, the fiber, and the annotations, spans and cause when there are any. Access-log lines keep their
 * message (`GET /path 200 3ms id=<request id>`). Read from the environment directly, as WORKERS is: the
 * cluster's primary writes its own lines and never builds the Effect app.
 */

/** The formats `LOG_FORMAT` takes. */
export type LogFormat = "pretty" | "json"

/** `LOG_FORMAT` from the environment (unset: `pretty`); an Error naming the setting when it is neither. */
export const logFormatFromEnv = (env: NodeJS.ProcessEnv = process.env): LogFormat => {
  const raw = (env["LOG_FORMAT"] ?? "").trim().toLowerCase()
  if (raw === "" || raw === "pretty") return "pretty"
  if (raw === "json") return "json"
  throw new Error(`LOG_FORMAT must be pretty or json (got ${JSON.stringify(env["LOG_FORMAT"])})`)
}

const HOST = hostname()

/** One log line as JSON: the fields every line has first, then what this one carries. */
const jsonLine = (fields: Record<string, unknown>): string => JSON.stringify({ time: new Date().toISOString(), host: HOST, pid: process.pid, ...fields })

/** The Effect logger of `LOG_FORMAT=json`: one JSON object per line on stdout. */
const jsonLogger = Logger.map(Logger.structuredLogger, (entry) => {
  const { annotations, cause, fiberId, logLevel, message, spans, timestamp } = entry
  return jsonLine({
    time: timestamp,
    level: logLevel,
    message,
    fiber: fiberId,
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    ...(Object.keys(spans).length > 0 ? { spans } : {}),
    ...(cause !== undefined ? { cause } : {})
  })
}).pipe(Logger.map((line) => void process.stdout.write(`${line}\n`)))

/** The logger of a server process for `format` (pretty: the platform's own, left as it is). */
export const LogFormatLive = (format: LogFormat): Layer.Layer<never> =>
  format === "json" ? Logger.replace(Logger.defaultLogger, jsonLogger) : Layer.empty

/** A line of the cluster's primary (which has no Effect logger) in `format`. */
export const primaryLine = (format: LogFormat, message: string): string =>
  format === "json"
    ? jsonLine({ level: "INFO", message, role: "primary" })
    : `${new Date().toISOString()} [primary ${process.pid}] ${message}`

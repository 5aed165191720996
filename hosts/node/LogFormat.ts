import { Config, ConfigError, Either, Layer, Logger } from "effect"
import { jsonLine, type LogFormat } from "./LogLines.js"

/*
 * `LOG_FORMAT`: how `npm start` writes its log. `pretty` (the default) is for a person at a terminal; `json` is
 * one JSON object per line on stdout, for a log shipper collecting several hosts: each line names its `host`
 * (the machine's hostname) and `pid` (the process: with WORKERS, several per machine), beside `time`, `level`,
 * `message`, the fiber, and the annotations, spans and cause when there are any. Access-log lines keep their
 * message (`GET /path 200 3ms id=<request id>`). Read from the environment directly, as WORKERS is: the
 * cluster's primary writes its own lines and never builds the Effect app.
 */

export { type LogFormat, logFormatFromEnv, primaryLine } from "./LogLines.js"

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

/**
 * `LOG_FORMAT` read through Effect `Config`, for the hosts that are not `npm start` (AWS Lambda): the same names
 * (`pretty` or `json`, any case; unset is `pretty`), and a wrong value is a configuration error naming it.
 */
export const logFormatConfig: Config.Config<LogFormat> = Config.string("LOG_FORMAT").pipe(
  Config.withDefault("pretty"),
  Config.mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "" || value === "pretty"
      ? Either.right("pretty" as const)
      : value === "json"
      ? Either.right("json" as const)
      : Either.left(ConfigError.InvalidData([], `LOG_FORMAT must be pretty or json (got ${JSON.stringify(raw)})`))
  })
)

/**
 * The logger of a host that has no platform logger of its own (Lambda): `json` writes what `npm start` writes with
 * LOG_FORMAT=json, `pretty` the lines `npm start` writes by default.
 */
export const HostLogFormat = (format: LogFormat): Layer.Layer<never> => format === "json" ? LogFormatLive("json") : Logger.pretty


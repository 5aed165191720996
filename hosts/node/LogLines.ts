import { hostname } from "node:os"

/*
 * The parts of `LOG_FORMAT` that need no Effect: reading the setting, and writing a line in either format.
 * Kept apart from LogFormat.ts (the Effect logger) so that what runs before the app is loaded — the settings
 * checks of main.ts, the cluster's primary, the start-up banner — does not load Effect at all.
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
export const jsonLine = (fields: Record<string, unknown>): string =>
  JSON.stringify({ time: new Date().toISOString(), host: HOST, pid: process.pid, ...fields })

/** A line of the cluster's primary (which has no Effect logger) in `format`. */
export const primaryLine = (format: LogFormat, message: string): string =>
  format === "json"
    ? jsonLine({ level: "INFO", message, role: "primary" })
    : `${new Date().toISOString()} [primary ${process.pid}] ${message}`

/**
 * Writes why the server cannot start or go on, each line once: plain lines on stderr for a person, or (json)
 * one object per line on stdout with level FATAL, as the rest of the log.
 */
export const printFatal = (format: LogFormat, lines: ReadonlyArray<string>): void => {
  for (const line of new Set(lines)) {
    if (format === "json") process.stdout.write(`${jsonLine({ level: "FATAL", message: line })}\n`)
    else process.stderr.write(`${line}\n`)
  }
}

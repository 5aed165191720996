import { Cause, ConfigError } from "effect"
import { postgresTarget } from "./Banner.js"
import { portProblemLine } from "./StartChecks.js"

/*
 * Why the Node host stopped, said once and in a line per reason: the setting it comes from, what is wrong and
 * what would be right — not the error's class, not a stack. The settings checked before start (StartChecks.ts)
 * cover what needs no network; these are the ones found while the app is built: a port taken between the
 * check and the listen, a database that does not exist or does not answer, a setting one of the layers reads
 * (RESPONSE_CACHE_MS, SECRET_KEYS, X402_FACILITATOR_URL...). A defect nobody foresaw keeps its full cause
 * (with its stack), printed once too. No line ever holds a secret of the environment (see `scrub`).
 */

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

/** One line per leaf of a configuration error, named by its setting. */
const configLines = (error: ConfigError.ConfigError): Array<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...configLines(error.left), ...configLines(error.right)]
    default: {
      const name = error.path.join("_")
      const message = error.message.replace(/\s+/g, " ").trim()
      if (name === "" || message.startsWith(name)) return [message]
      return [`${name}: ${message}`]
    }
  }
}

/** A network error's code: Node's own, or the first of an AggregateError's (IPv4 and IPv6 both tried). */
const codeOf = (error: unknown): string | undefined =>
  text(field(error, "code")) ?? text(field((field(error, "errors") as Array<unknown> | undefined)?.[0], "code"))

/** A failure to reach or use the database, named by the setting that chose it. */
const databaseLine = (error: unknown, env: NodeJS.ProcessEnv): string => {
  const cause = field(error, "cause")
  const why = text(field(cause, "message")) ?? text(field(error, "message")) ?? "unknown error"
  const url = (env["DATABASE_URL"] ?? "").trim()
  if (url === "") return `DATA_DIR: the embedded database failed: ${why}`
  const { host, name, port, user } = postgresTarget(url)
  const at = `${host}:${port}`
  switch (codeOf(cause)) {
    case "3D000":
      return `DATABASE_URL: database "${name}" does not exist on ${at} (create it, or name another one)`
    case "ECONNREFUSED":
      return `DATABASE_URL: connection refused on ${at}: no PostgreSQL listens there`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `DATABASE_URL: host "${host}" not found`
    case "28P01":
    case "28000":
      return `DATABASE_URL: ${at} refused user "${user}" (${why})`
    default:
      return why === "Connection timed out"
        ? `DATABASE_URL: no answer from ${at} within DATABASE_CONNECT_TIMEOUT_MS`
        : `DATABASE_URL: cannot use database "${name}" on ${at}: ${why}`
  }
}

/** The line of one failure. */
const failureLine = (error: unknown, env: NodeJS.ProcessEnv, port: number): Array<string> => {
  if (ConfigError.isConfigError(error)) return configLines(error)
  switch (field(error, "_tag")) {
    case "ServeError":
      return [portProblemLine("PORT", port, (field(error, "cause") ?? {}) as NodeJS.ErrnoException)]
    case "SqlError":
      return [databaseLine(error, env)]
    case "EmbeddedDatabaseError":
      return [`DATA_DIR: ${text(field(error, "message")) ?? "the embedded database failed"}`]
  }
  return [text(field(error, "message")) ?? String(error)]
}

/** The values of the environment that must never be printed: passwords, tokens, keys, provider URLs. */
const secretsOf = (env: NodeJS.ProcessEnv): Array<string> => {
  const values: Array<string> = []
  for (const name of ["DATABASE_URL", "SMTP_URL", "BASE_RPC_URL", "SOLANA_RPC_URL"]) {
    const raw = (env[name] ?? "").trim()
    if (raw === "" || raw === "off") continue
    values.push(raw)
    if (URL.canParse(raw)) {
      const url = new URL(raw)
      if (url.password !== "") values.push(url.password, decodeURIComponent(url.password))
    }
  }
  for (const name of ["SECRET_KEYS", "GITHUB_TOKEN", "GITHUB_CLIENT_SECRET"]) {
    const raw = (env[name] ?? "").trim()
    if (raw !== "") values.push(raw, ...raw.split(",").map((key) => key.slice(key.indexOf(":") + 1).trim()))
  }
  // Longest first, so a URL goes before the password inside it; nothing too short to be a secret.
  return [...new Set(values)].filter((v) => v.length >= 4).sort((a, b) => b.length - a.length)
}

/** `line` with every secret of the environment replaced by `***`. */
export const scrub = (line: string, env: NodeJS.ProcessEnv = process.env): string =>
  secretsOf(env).reduce((out, secret) => out.split(secret).join("***"), line)

/**
 * Why the host stopped, one line per reason (each once), or, for a defect, its whole cause; nothing for an
 * interruption (a SIGTERM or SIGINT is a stop, not a failure).
 */
export const fatalLines = (cause: Cause.Cause<unknown>, env: NodeJS.ProcessEnv, port: number): Array<string> => {
  if (Cause.isInterruptedOnly(cause)) return []
  const failures = [...Cause.failures(cause)].flatMap((e) => failureLine(e, env, port))
  // Nobody foresaw these: their stack is what finds them.
  const defects = [...Cause.defects(cause)].map((d) => (d instanceof Error ? d.stack ?? d.message : String(d)))
  return [...new Set([...failures, ...defects].map((line) => scrub(line, env)))]
}

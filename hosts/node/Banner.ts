import { join, resolve } from "node:path"
import { jsonLine, type LogFormat } from "./LogLines.js"
import type { MetricsSettings } from "./MetricsSettings.js"

/*
 * The start-up banner of `npm start`: once the server answers, one short block saying where it is and what it
 * runs on — its URL, the database, the code host, where sign-in links go, whether live payments are on, the
 * workers and the metrics port — so that nobody has to read the settings table to know what they started.
 * With `LOG_FORMAT=json` the same facts are one JSON line. Read from the environment directly (as the
 * cluster's primary, which prints it when WORKERS is above 1, never builds the Effect app) and never shows a
 * secret: no password of `DATABASE_URL` or `SMTP_URL`, no token, only hosts and whether a token is set.
 */

/** What the banner says, as facts (the JSON line carries them as they are). */
export interface BannerFacts {
  /** Where to open it: `BASE_URL`, else `http://localhost:<PORT>`. */
  readonly url: string
  readonly port: number
  readonly database:
    | { readonly engine: "pglite"; readonly path: string }
    | { readonly engine: "postgresql"; readonly host: string; readonly port: number; readonly name: string }
  readonly code_host: { readonly api_url: string; readonly auth: "token" | "anonymous" }
  readonly mail: { readonly via: "smtp"; readonly host: string } | { readonly via: "log" }
  readonly payments:
    | { readonly live: false }
    | { readonly live: true; readonly facilitator: string; readonly networks: ReadonlyArray<string> }
  readonly workers: number
  /** `http://<METRICS_HOST>:<METRICS_PORT>/metrics`, or null when metrics are off. */
  readonly metrics: string | null
}

const set = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = (env[name] ?? "").trim()
  return value === "" ? undefined : value
}

const parsed = (raw: string): URL | undefined => (URL.canParse(raw) ? new URL(raw) : undefined)

/** Where a PostgreSQL URL points, without its user or password (node-postgres' defaults where it is silent). */
export const postgresTarget = (raw: string): { readonly host: string; readonly port: number; readonly name: string; readonly user: string } => {
  const url = parsed(raw.trim())
  const user = url === undefined ? "" : decodeURIComponent(url.username)
  const host = url?.searchParams.get("host") ?? (url === undefined || url.hostname === "" ? "localhost" : url.hostname.replace(/^\[(.*)\]$/, "$1"))
  const port = url === undefined || url.port === "" ? 5432 : Number(url.port)
  const name = url === undefined ? "" : decodeURIComponent(url.pathname.replace(/^\//, ""))
  return { host, port, name: name === "" ? user : name, user }
}

/** The facts of this start, from the environment and the settings main.ts checked. */
export const bannerFacts = (
  env: NodeJS.ProcessEnv,
  settings: { readonly port: number; readonly workers: number; readonly metrics: MetricsSettings | null }
): BannerFacts => {
  const baseUrl = set(env, "BASE_URL")
  const databaseUrl = set(env, "DATABASE_URL")
  const smtp = set(env, "SMTP_URL")
  const facilitator = set(env, "X402_FACILITATOR_URL")
  const api = set(env, "GITHUB_API_URL") ?? "https://api.github.com"
  // Origin and path only: nothing of a user, query or fragment (GithubConfig refuses them anyway).
  const apiUrl = parsed(api) === undefined ? api : `${new URL(api).origin}${new URL(api).pathname.replace(/\/+$/, "")}`
  const target = databaseUrl === undefined ? undefined : postgresTarget(databaseUrl)
  return {
    url: baseUrl === undefined ? `http://localhost:${settings.port}` : (parsed(baseUrl)?.origin ?? baseUrl),
    port: settings.port,
    // As PgliteEmbeddedLive places it: `<DATA_DIR>/pg`, DATA_DIR defaulting to ./.data.
    database: target === undefined
      ? { engine: "pglite", path: resolve(join(env["DATA_DIR"] ?? "./.data", "pg")) }
      : { engine: "postgresql", host: target.host, port: target.port, name: target.name },
    code_host: { api_url: apiUrl, auth: set(env, "GITHUB_TOKEN") === undefined ? "anonymous" : "token" },
    mail: smtp === undefined ? { via: "log" } : { via: "smtp", host: parsed(smtp)?.host ?? "(unreadable SMTP_URL)" },
    payments: facilitator === undefined
      ? { live: false }
      : { live: true, facilitator: parsed(facilitator)?.host ?? facilitator, networks: ["base", "solana"] },
    workers: settings.workers,
    metrics: settings.metrics === null ? null : `http://${settings.metrics.host.includes(":") ? `[${settings.metrics.host}]` : settings.metrics.host}:${settings.metrics.port}/metrics`
  }
}

const headline = (facts: BannerFacts): string =>
  `repomarket is answering on ${facts.url}${facts.url === `http://localhost:${facts.port}` ? "" : ` (port ${facts.port})`}`

/** The banner as a person reads it: a headline and one line per fact. */
export const bannerText = (facts: BannerFacts): string => {
  const db = facts.database
  const rows: Array<[string, string]> = [
    ["database", db.engine === "pglite" ? `embedded PGlite in ${db.path}` : `PostgreSQL ${db.host}:${db.port}/${db.name}`],
    ["code host", `${facts.code_host.api_url}, ${
      facts.code_host.auth === "token" ? "with GITHUB_TOKEN" : "anonymous (60 requests an hour; GITHUB_TOKEN raises it)"
    }`],
    ["mail", facts.mail.via === "smtp" ? `SMTP via ${facts.mail.host}` : "none: sign-in links are written to this log (SMTP_URL sends them)"],
    ["payments", facts.payments.live
      ? `live on ${facts.payments.networks.join(" and ")} through ${facts.payments.facilitator}, and the test twin`
      : "test twin only (X402_FACILITATOR_URL turns on live payments)"],
    ["workers", String(facts.workers)],
    ["metrics", facts.metrics ?? "off (METRICS_PORT turns them on)"]
  ]
  return [headline(facts), ...rows.map(([name, value]) => `  ${name.padEnd(11)}${value}`)].join("\n")
}

/** Who prints it: a cluster's primary says so in the JSON line, as its other lines do. */
export interface BannerOptions {
  readonly role?: "primary"
}

/** The banner in `format`: a block of text, or one JSON line carrying the same facts. */
export const formatBanner = (facts: BannerFacts, format: LogFormat, options: BannerOptions = {}): string =>
  format === "json" ? jsonLine({ level: "INFO", message: headline(facts), ...facts, ...options }) : bannerText(facts)

/** Whether `LOG_LEVEL` lets an INFO line through (the banner is one): not at WARN, ERROR, FATAL or OFF. */
export const bannerShown = (env: NodeJS.ProcessEnv): boolean =>
  !["WARN", "ERROR", "FATAL", "OFF"].includes((env["LOG_LEVEL"] ?? "").toUpperCase())

/** Prints the banner on stdout (when `LOG_LEVEL` lets INFO lines through). */
export const printBanner = (facts: BannerFacts, format: LogFormat, options: BannerOptions = {}, env: NodeJS.ProcessEnv = process.env): void => {
  if (bannerShown(env)) process.stdout.write(`${formatBanner(facts, format, options)}\n`)
}

import type { Server, ServerOptions } from "node:http"
import type { Socket } from "node:net"
import { Config, Context, Effect, Layer, Option, Runtime } from "effect"
import { clientKey } from "../../app/handlers/ClientAddress.js"
import { TrustedProxiesConfig } from "../../app/TrustedProxies.js"

/*
 * What one connection may cost the Node host. Node's defaults (the same from 20 to 24) keep a client that sends its headers one byte
 * a second for up to 90 s (headersTimeout 60 s, checked every 30 s), a slow request body for 300 s, a download
 * whose client stopped reading for ever (and with it the code-host download feeding it), and accept
 * connections until the process runs out of file descriptors, after which ordinary requests fail too. Here:
 *
 * - `HEADERS_TIMEOUT_MS` (15 s) to receive a request's headers, `REQUEST_TIMEOUT_MS` (30 s) to receive the
 *   whole request, body included: past either Node answers 408 and closes the connection. Both are checked
 *   every second (every quarter of the shorter one when that is less).
 * - `KEEP_ALIVE_TIMEOUT_MS` (5 s): how long an idle kept-alive connection waits for its next request.
 * - `RESPONSE_STALL_TIMEOUT_MS` (60 s): a connection with answer bytes waiting to go out whose client has not
 *   taken any of them for that long is closed. Closing it ends the request's fiber, which aborts whatever feeds
 *   the answer (a paid archive's download from the code host). A response the app is still computing has
 *   nothing waiting to go out and is never cut by this.
 * - `MAX_CONNECTIONS` (800) open connections in all; beyond that Node closes new ones at once. Each is a file
 *   descriptor, and a download holds a second one to the code host: keep it well under `ulimit -n` (a common
 *   default is 1 024), so the database pool, the code host and the mailer still get theirs.
 * - `MAX_CONNECTIONS_PER_CLIENT` (100) open connections per client address (an IPv6 client by its /64, as the
 *   per-client rate limits count): one more is closed at once, so one client cannot take them all. Connections
 *   from the proxies `TRUSTED_PROXIES` names carry many clients and are not counted per client (the proxy
 *   should limit its own clients; see docs/reverse-proxy.md).
 *
 * Counts are per process (with WORKERS above 1, per worker).
 */

/** The connection settings of the Node host (see above). */
export interface ConnectionSettings {
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  readonly responseStallTimeoutMs: number
  readonly maxConnections: number
  readonly maxConnectionsPerClient: number
}

export const DEFAULT_CONNECTION_SETTINGS: ConnectionSettings = {
  headersTimeoutMs: 15_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  responseStallTimeoutMs: 60_000,
  maxConnections: 800,
  maxConnectionsPerClient: 100
}

/** What the server applies: the settings, which peers are trusted proxies, and where its warnings go. */
export interface ConnectionLimits {
  readonly settings: ConnectionSettings
  /** Whether a peer is one of the trusted proxies (not counted per client). */
  readonly trusts: (address: string) => boolean
  /** A warning line (refused connections, ended responses), at most one a minute. */
  readonly warn?: (line: string) => void
}

/** Where the settings have not been read (an embedder's server, most tests): the defaults, no proxy trusted. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { settings: DEFAULT_CONNECTION_SETTINGS, trusts: () => false }

export class ConnectionLimitsTag extends Context.Tag("repomarket/ConnectionLimits")<ConnectionLimitsTag, ConnectionLimits>() {}

const milliseconds = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a whole number of milliseconds from 100 to ${max}`, validation: (n) => n >= 100 && n <= max })
  )

const count = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a whole number from 1 to 1000000`, validation: (n) => n >= 1 && n <= 1_000_000 })
  )

/**
 * `HEADERS_TIMEOUT_MS`, `REQUEST_TIMEOUT_MS`, `KEEP_ALIVE_TIMEOUT_MS`, `RESPONSE_STALL_TIMEOUT_MS`,
 * `MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_CLIENT`, with the defaults above. A value out of range, a headers
 * timeout longer than the request timeout, or a per-client cap above the total stops start-up naming it.
 */
export const connectionSettingsConfig: Config.Config<ConnectionSettings> = Config.all({
  headersTimeoutMs: milliseconds("HEADERS_TIMEOUT_MS", DEFAULT_CONNECTION_SETTINGS.headersTimeoutMs, 600_000),
  requestTimeoutMs: milliseconds("REQUEST_TIMEOUT_MS", DEFAULT_CONNECTION_SETTINGS.requestTimeoutMs, 3_600_000),
  keepAliveTimeoutMs: milliseconds("KEEP_ALIVE_TIMEOUT_MS", DEFAULT_CONNECTION_SETTINGS.keepAliveTimeoutMs, 600_000),
  responseStallTimeoutMs: milliseconds("RESPONSE_STALL_TIMEOUT_MS", DEFAULT_CONNECTION_SETTINGS.responseStallTimeoutMs, 3_600_000),
  maxConnections: count("MAX_CONNECTIONS", DEFAULT_CONNECTION_SETTINGS.maxConnections),
  maxConnectionsPerClient: count("MAX_CONNECTIONS_PER_CLIENT", DEFAULT_CONNECTION_SETTINGS.maxConnectionsPerClient)
}).pipe(
  Config.validate({
    message: "HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS (the headers are part of the request)",
    validation: (s) => s.headersTimeoutMs <= s.requestTimeoutMs
  }),
  Config.validate({
    message: "MAX_CONNECTIONS_PER_CLIENT must not be above MAX_CONNECTIONS",
    validation: (s) => s.maxConnectionsPerClient <= s.maxConnections
  })
)

/** The settings from the environment, the trusted proxies of `TRUSTED_PROXIES`, warnings through the Effect logger. */
export const ConnectionLimitsLive = Layer.effect(
  ConnectionLimitsTag,
  Effect.gen(function*() {
    const settings = yield* connectionSettingsConfig
    const proxies = yield* TrustedProxiesConfig
    const runtime = yield* Effect.runtime<never>()
    return {
      settings,
      trusts: Option.match(proxies, { onNone: () => () => false, onSome: (p) => p.trusts }),
      warn: (line: string) => Runtime.runSync(runtime)(Effect.logWarning(line))
    }
  })
)

/** How often Node checks the headers and request timeouts: every second, or a quarter of the shorter one. */
const checkingIntervalOf = (s: ConnectionSettings) => Math.max(25, Math.min(1_000, Math.floor(Math.min(s.headersTimeoutMs, s.requestTimeoutMs) / 4)))

/** The `createServer` options of these settings. */
export const serverOptionsOf = (s: ConnectionSettings): ServerOptions => ({
  headersTimeout: s.headersTimeoutMs,
  requestTimeout: s.requestTimeoutMs,
  keepAliveTimeout: s.keepAliveTimeoutMs,
  connectionsCheckingInterval: checkingIntervalOf(s)
})

interface Tracked {
  /**
   * Bytes waiting to go out and bytes handed to the socket at the last look, and since when they stand still
   * (progress is seen a write at a time: a client that takes a few bytes a minute never finishes one).
   */
  pending: number
  written: number
  since: number
}

const WARN_INTERVAL_MS = 60_000

/**
 * Puts the limits on `server` (made with `serverOptionsOf`): `maxConnections`, the per-client cap and the
 * stalled-response check. Returns the test every new connection must pass: the caller calls it for each
 * `connection` event and drops (without passing it to Node's HTTP parser) a socket it refuses, which it has
 * already destroyed.
 */
export const limitConnections = (server: Server, limits: ConnectionLimits): (socket: Socket) => boolean => {
  const { settings } = limits
  server.maxConnections = settings.maxConnections
  const tracked = new Map<Socket, Tracked>()
  const perClient = new Map<string, number>()
  const counts = { overTotal: 0, overClient: 0, stalled: 0 }
  let lastWarning = 0
  let flush: NodeJS.Timeout | undefined

  // The first refusal is told at once; what follows within the minute is told, summed, when it ends.
  const warnNow = () => {
    if (limits.warn === undefined) return
    const now = Date.now()
    const wait = lastWarning + WARN_INTERVAL_MS - now
    if (wait > 0) {
      if (flush === undefined) {
        flush = setTimeout(() => {
          flush = undefined
          warnNow()
        }, wait)
        flush.unref()
      }
      return
    }
    if (counts.overTotal + counts.overClient + counts.stalled === 0) return
    lastWarning = now
    const parts = [
      counts.overTotal > 0 ? `${counts.overTotal} refused at MAX_CONNECTIONS (${settings.maxConnections})` : "",
      counts.overClient > 0 ? `${counts.overClient} refused at MAX_CONNECTIONS_PER_CLIENT (${settings.maxConnectionsPerClient})` : "",
      counts.stalled > 0 ? `${counts.stalled} closed after RESPONSE_STALL_TIMEOUT_MS (${settings.responseStallTimeoutMs} ms) without the client reading` : ""
    ].filter((p) => p !== "")
    counts.overTotal = counts.overClient = counts.stalled = 0
    limits.warn(`Connections: ${parts.join("; ")} (at most one such line a minute)`)
  }

  server.on("drop", () => {
    counts.overTotal++
    warnNow()
  })

  const check = () => {
    const now = Date.now()
    for (const [socket, t] of tracked) {
      const pending = socket.writableLength
      const written = socket.bytesWritten
      if (pending === 0 || pending !== t.pending || written !== t.written) {
        t.pending = pending
        t.written = written
        t.since = now
      } else if (now - t.since >= settings.responseStallTimeoutMs) {
        tracked.delete(socket)
        counts.stalled++
        // Closing the socket closes its response, which interrupts the request's fiber (and its download).
        socket.destroy()
        warnNow()
      }
    }
  }
  const every = Math.max(25, Math.min(1_000, Math.floor(settings.responseStallTimeoutMs / 4)))
  let timer: NodeJS.Timeout | undefined
  server.on("listening", () => {
    clearInterval(timer)
    timer = setInterval(check, every)
    timer.unref()
  })
  server.on("close", () => {
    clearInterval(timer)
    clearTimeout(flush)
  })

  return (socket) => {
    const address = socket.remoteAddress
    const key = address === undefined || limits.trusts(address) ? null : clientKey(address)
    if (key !== null) {
      const open = perClient.get(key) ?? 0
      if (open >= settings.maxConnectionsPerClient) {
        counts.overClient++
        socket.destroy()
        warnNow()
        return false
      }
      perClient.set(key, open + 1)
    }
    tracked.set(socket, { pending: 0, written: 0, since: Date.now() })
    socket.once("close", () => {
      tracked.delete(socket)
      if (key === null) return
      const open = (perClient.get(key) ?? 1) - 1
      if (open <= 0) perClient.delete(key)
      else perClient.set(key, open)
    })
    return true
  }
}

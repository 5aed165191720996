import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ListenOptions, Socket } from "node:net"
import { Cookies, HttpApp, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Context, Effect, FiberRef, Layer, Option, Runtime } from "effect"
import { ChangeFeed } from "../ports/ChangeFeed.js"
import { AccountStore } from "../ports/AccountStore.js"
import { ListingStore } from "../ports/ListingStore.js"
import { Transactor } from "../ports/Transactor.js"
import { loggablePath } from "./AccessLog.js"
import { type ConnectionLimits, ConnectionLimitsTag, DEFAULT_CONNECTION_LIMITS, limitConnections, serverOptionsOf } from "./Connections.js"
import { HostLifecycle, type Lifecycle } from "./Lifecycle.js"
import { nameRequest, requestIdSuffix } from "./RequestId.js"
import { type HostMetrics, HostMetricsTag } from "./HostMetrics.js"
import { prefersHtml } from "./pages/Negotiation.js"

/*
 * The front door: the two answers every buyer and agent asks for first — a listing's repo page as JSON and
 * a checkout's 402 challenge — served from memory by the Node server itself, before a request ever reaches
 * the Effect app. What it serves is exactly what the app answered for the same request a moment ago
 * (status, headers and bytes, remembered on the way out), so the two paths cannot disagree.
 *
 * How long an answer may be served:
 * - a write to listings or accounts through this process (any store method that is not a read, and the end
 *   of every transaction) forgets every remembered answer at once, so a seller's change is visible on the
 *   next request, here;
 * - an answer computed while such a write ran is never remembered (the generation moved on meanwhile);
 * - every answer expires after `RESPONSE_CACHE_MS` (default 2 000 ms): the bound on what another instance
 *   writing to the same database can leave stale. Paying never goes through here: a payment made against a
 *   stale 402 is checked against the current listing by the app and refused with a fresh 402.
 *
 * Only `GET` without a query string or body; the repo page only when it negotiates JSON (the HTML page
 * carries a fresh CSP nonce on every answer); the checkout only without a payment or sign-in header and only when
 * it negotiates the x402 answer (not the browser's checkout page); only the expected
 * statuses (200, 402). Everything else goes to the app.
 */

export interface FrontDoorOptions {
  /** How long a remembered answer is served; 0 turns the front door off. */
  readonly ttlMs: number
  /** At most this many answers (the oldest go first). */
  readonly maxEntries: number
  /** At most this many body bytes in all. */
  readonly maxBytes: number
  /** One access-log line per answer served here, as the app's guard writes for the others. */
  readonly log?: (line: string) => void
  /** The clock (milliseconds); tests may pass their own. */
  readonly now?: () => number
}

interface Entry {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly expires: number
}

export interface FrontDoorStats {
  readonly hits: number
  readonly remembered: number
  readonly forgotten: number
  readonly entries: number
  readonly bytes: number
}

export interface FrontDoorCache {
  /** Node level: answers the request from memory and returns true, or returns false and touches nothing. */
  readonly answer: (req: IncomingMessage, res: ServerResponse) => boolean
  /** Which remembered answer a request would get, or null when it is not one the front door serves. */
  readonly keyOf: (method: string, url: string, headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) => string | null
  /** The current generation; an answer computed from an older one is not remembered. */
  readonly generation: () => number
  /** Remembers the app's answer to `key`, if it is an expected one and nothing was written since `generation`. */
  readonly remember: (key: string, generation: number, response: HttpServerResponse.HttpServerResponse) => void
  /** Forgets everything: called after every write that could change a remembered answer. */
  readonly invalidate: () => void
  readonly stats: () => FrontDoorStats
}

/** Repo page: `/r/<owner>/<repo>`. Checkout: `/checkout/<id>` and `/checkout/<id>/test`. */
const routeOf = (path: string): "page" | "checkout" | null => {
  const parts = path.split("/")
  if (parts[1] === "r") return parts.length === 4 && parts[2] !== "" && parts[3] !== "" ? "page" : null
  if (parts[1] === "checkout" && parts[2] !== "" && parts[2] !== undefined) {
    return parts.length === 3 || (parts.length === 4 && parts[3] === "test") ? "checkout" : null
  }
  return null
}

const EXPECTED_STATUS = { page: 200, checkout: 402 } as const

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value === undefined ? undefined : value.join(", ")

export const makeFrontDoor = (options: FrontDoorOptions): FrontDoorCache => {
  const now = options.now ?? Date.now
  const entries = new Map<string, Entry>()
  let generation = 0
  let bytes = 0
  let hits = 0
  let remembered = 0
  let forgotten = 0

  const drop = (key: string, entry: Entry) => {
    entries.delete(key)
    bytes -= entry.body.byteLength
  }

  const keyOf: FrontDoorCache["keyOf"] = (method, url, headers) => {
    if (options.ttlMs <= 0 || method !== "GET" || url.includes("?")) return null
    // A GET with a body is unusual enough to leave to the app.
    const length = single(headers["content-length"])
    if ((length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined) return null
    const route = routeOf(url)
    if (route === "page") return prefersHtml(single(headers["accept"])) ? null : `page ${url}`
    if (route === "checkout") {
      // A payment or a wallet's sign-in proof is the app's to answer.
      const plain = headers["payment-signature"] === undefined && headers["x-payment"] === undefined && headers["sign-in-with-x"] === undefined
      // A browser's checkout page carries a fresh CSP nonce, like the HTML repo page.
      return plain && !prefersHtml(single(headers["accept"])) ? `checkout ${url}` : null
    }
    return null
  }

  const answer: FrontDoorCache["answer"] = (req, res) => {
    const key = keyOf(req.method ?? "", req.url ?? "", req.headers as IncomingHttpHeaders)
    if (key === null) return false
    const entry = entries.get(key)
    if (entry === undefined) return false
    if (now() >= entry.expires) {
      drop(key, entry)
      return false
    }
    hits++
    res.writeHead(entry.status, entry.headers)
    res.end(entry.body)
    options.log?.(`${req.method} ${loggablePath(req.url ?? "")} ${entry.status} 0ms (front door)${requestIdSuffix(req)}`)
    return true
  }

  const remember: FrontDoorCache["remember"] = (key, startedAt, response) => {
    if (startedAt !== generation || response.body._tag !== "Uint8Array") return
    if (response.status !== EXPECTED_STATUS[key.startsWith("page ") ? "page" : "checkout"]) return
    // An answer that sets a cookie belongs to one client: never replayed to another.
    if (!Cookies.isEmpty(response.cookies) || response.headers["set-cookie"] !== undefined) return
    const body = response.body.body
    if (body.byteLength > options.maxBytes) return
    const previous = entries.get(key)
    if (previous !== undefined) drop(key, previous)
    while (entries.size >= options.maxEntries || bytes + body.byteLength > options.maxBytes) {
      const oldest = entries.entries().next().value
      if (oldest === undefined) break
      drop(oldest[0], oldest[1])
    }
    entries.set(key, { status: response.status, headers: { ...response.headers }, body, expires: now() + options.ttlMs })
    bytes += body.byteLength
    remembered++
  }

  const invalidate = () => {
    generation++
    if (entries.size > 0) forgotten += entries.size
    entries.clear()
    bytes = 0
  }

  return {
    answer,
    keyOf,
    generation: () => generation,
    remember,
    invalidate,
    stats: () => ({ hits, remembered, forgotten, entries: entries.size, bytes })
  }
}

/** The front door of a Node host. Hosts without one (Lambda, most tests) answer everything in the app. */
export class FrontDoor extends Context.Tag("hosts/http/FrontDoor")<FrontDoor, FrontDoorCache>() {}

/** `RESPONSE_CACHE_MS` (default 2000; 0 turns it off). Access-log lines go through the Effect logger. */
export const FrontDoorLive = Layer.effect(
  FrontDoor,
  Effect.gen(function*() {
    const ttlMs = yield* Config.integer("RESPONSE_CACHE_MS").pipe(
      Config.withDefault(2000),
      Config.validate({ message: "RESPONSE_CACHE_MS must be a whole number of milliseconds from 0 to 60000", validation: (n) => n >= 0 && n <= 60_000 })
    )
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string) => Runtime.runSync(runtime)(Effect.logInfo(line))
    return makeFrontDoor({ ttlMs, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024, log })
  })
)

/** Wraps the whole app (outside the guard): remembers the answers the front door may serve. */
export const rememberAnswers = <E, R>(app: HttpApp.Default<E, R>, door: FrontDoorCache): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
    const key = door.keyOf(req.method, req.url, req.headers)
    if (key === null) return app
    const generation = door.generation()
    // What the client gets is the response after the pre-response handlers the request registered (the
    // pages' `Vary: Accept`, for one): the platform applies them after the app, so remember it as they make it.
    return Effect.tap(app, (response) =>
      Effect.flatMap(FiberRef.get(HttpApp.currentPreResponseHandlers), (handler) =>
        Option.isNone(handler)
          ? Effect.sync(() => door.remember(key, generation, response))
          : handler.value(req, response).pipe(
            Effect.tap((final) => door.remember(key, generation, final)),
            Effect.ignore
          )))
  })

const isRead = (name: string) => name.startsWith("find") || name.startsWith("list")

/**
 * Every method of a store that is not a read (`find…`, `list…`) announces itself to the other hosts (inside
 * the write's transaction, so they hear it on commit) and forgets this host's remembered answers when it ends.
 */
const invalidatingWrites = <S extends object>(store: S, forget: () => void, announce: Effect.Effect<void>): S =>
  Object.fromEntries(
    Object.entries(store).map(([name, method]) =>
      typeof method !== "function" || isRead(name)
        ? [name, method]
        : [name, (...args: Array<unknown>) =>
          Effect.ensuring(Effect.tap(method(...args) as Effect.Effect<unknown, unknown, unknown>, () => announce), Effect.sync(forget))]
    )
  ) as S

/**
 * The listing and account stores and the transactor as the use cases see them: where a front door exists,
 * every write forgets its remembered answers — when the write ends and again when its transaction ends, so
 * an answer read between the two (the write not yet committed) is not kept either. Where hosts share a
 * database (ChangeFeed), every write is also announced to the others, whose followers forget theirs.
 */
export const InvalidatingStorage = Layer.effectContext(
  Effect.gen(function*() {
    const listings = yield* ListingStore
    const accounts = yield* AccountStore
    const tx = yield* Transactor
    const door = yield* Effect.serviceOption(FrontDoor)
    const feed = yield* Effect.serviceOption(ChangeFeed)
    if (Option.isNone(door) && Option.isNone(feed)) {
      return Context.make(ListingStore, listings).pipe(Context.add(AccountStore, accounts), Context.add(Transactor, tx))
    }
    const forget = Option.match(door, { onNone: () => () => undefined, onSome: (d) => d.invalidate })
    const announce = Option.match(feed, { onNone: () => Effect.void, onSome: (f) => f.publish })
    return Context.make(ListingStore, invalidatingWrites(listings, forget, announce)).pipe(
      Context.add(AccountStore, invalidatingWrites(accounts, forget, announce)),
      Context.add(Transactor, { withTransaction: (effect) => Effect.ensuring(tx.withTransaction(effect), Effect.sync(forget)) })
    )
  })
)

/**
 * The front door forgets what it remembered whenever another host announces a write, and whenever
 * announcements may have been missed (see ChangeFeed). `RESPONSE_CACHE_MS` stays the backstop.
 */
export const FrontDoorFollowsOtherHosts = Layer.scopedDiscard(
  Effect.gen(function*() {
    const door = yield* FrontDoor
    const feed = yield* ChangeFeed
    yield* Effect.forkScoped(feed.follow(() => door.invalidate()))
  })
)

/**
 * A Node server whose front door answers before the app: `request` events it answers never reach the
 * platform's handler (the one place Node lets a listener stand in front of another is `emit`). With a
 * lifecycle, every request is counted until its response closes, so a stopping host can drain. Its
 * connections are bounded as `limits` say (Connections.ts): timeouts, open connections in all and per
 * client, stalled responses; a connection refused there never reaches Node's HTTP parser.
 */
export const serverWithFrontDoor = (
  door: FrontDoorCache,
  lifecycle?: Lifecycle,
  metrics?: HostMetrics,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS
): Server => {
  const server = createServer(serverOptionsOf(limits.settings))
  const admit = limitConnections(server, limits)
  lifecycle?.attach(server)
  const emit = server.emit.bind(server) as (event: string, ...args: Array<unknown>) => boolean
  server.emit = ((event: string, ...args: Array<unknown>) => {
    if (event === "connection" && !admit(args[0] as Socket)) return true
    if (event !== "request") return emit(event, ...args)
    const [req, res] = args as [IncomingMessage, ServerResponse]
    nameRequest(req, res)
    lifecycle?.track(req, res)
    if (door.answer(req, res)) {
      metrics?.observe(req, res, "front_door")
      return true
    }
    metrics?.observe(req, res, "app")
    return emit(event, ...args)
  }) as Server["emit"]
  return server
}

/**
 * The Node HTTP server layer of `npm start`, with the front door in front of the app; its connection limits
 * are `ConnectionLimitsLive`'s where provided (`npm start` reads them from the environment), else the defaults.
 */
export const NodeServerWithFrontDoor = (options: ListenOptions) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.all([FrontDoor, Effect.serviceOption(HostLifecycle), Effect.serviceOption(HostMetricsTag), Effect.serviceOption(ConnectionLimitsTag)]),
      ([door, lifecycle, metrics, limits]) =>
        NodeHttpServer.layer(
          () => serverWithFrontDoor(door, Option.getOrUndefined(lifecycle), Option.getOrUndefined(metrics), Option.getOrElse(limits, () => DEFAULT_CONNECTION_LIMITS)),
          options
        )
    )
  )

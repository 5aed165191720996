import { connect, type Socket } from "node:net"
import { NodeHttpClient } from "@effect/platform-node"
import { HttpServer } from "@effect/platform"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Logger } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostGithub } from "../../adapters/github/CodeHostGithub.js"
import { HttpLive } from "../../app/AppLayer.js"
import { ConnectionLimitsLive, connectionSettingsConfig, DEFAULT_CONNECTION_SETTINGS } from "../../hosts/node/Connections.js"
import { FrontDoorLive } from "../../app/FrontDoor.js"
import { NodeServerWithFrontDoor } from "../../hosts/node/FrontDoorServer.js"
import { startFakeFacilitator } from "../faults/fakeFacilitator.js"
import { BASE_WALLET, OFFLINE_SETTINGS, testPorts } from "../support/app.js"
import { endlessTarball, startFakeGithubServer } from "../support/fakeGithubServer.js"
import { acceptedOf, b64, challenge, REAL_TIME, sell, signEvm } from "../support/purchase.js"

/*
 * Issue 33 finding 3: slow and greedy clients against the Node host as `npm start` serves it (a real server on
 * loopback, real sockets), with the connection settings of hosts/node/Connections.ts set short so each case
 * takes seconds: headers sent a byte at a time, a body sent a byte at a time, a paid download whose client
 * stops reading (its code-host download must be aborted), and more connections from one client than it may
 * hold. Every wait is bounded; on the code before the change each case runs into its bound and fails.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The app served as `npm start` serves it, with these settings (connection limits included) and ports. */
const Served = (settings: Record<string, string>, ports: Layer.Layer<any, any> = testPorts()) => {
  const config = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...OFFLINE_SETTINGS, ...settings }))))
  const server = HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
    Layer.provideMerge(NodeServerWithFrontDoor({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(FrontDoorLive.pipe(Layer.provide(config))),
    Layer.provide(ConnectionLimitsLive.pipe(Layer.provide(config)))
  )
  return HttpLive.pipe(
    Layer.provide(config),
    Layer.provideMerge(ports),
    Layer.provideMerge(server),
    Layer.provide(Logger.remove(Logger.defaultLogger))
  )
}

const portOf = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

/** A raw connection from `localAddress`, recording what it receives and when it closes. */
interface Raw {
  readonly socket: Socket
  readonly connected: Promise<void>
  readonly received: () => string
  /** Milliseconds since the connection was made when it closed, or null while open. */
  readonly closedAfter: () => number | null
  readonly closed: Promise<void>
}

const rawConnection = (port: number, localAddress = "127.0.0.1"): Raw => {
  const socket = connect({ host: "127.0.0.1", port, localAddress })
  const opened = Date.now()
  let received = ""
  let closedAt: number | null = null
  socket.on("data", (d: Buffer) => (received += d.toString("latin1")))
  socket.on("error", () => undefined)
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      closedAt = Date.now()
      resolve()
    })
  )
  return {
    socket,
    connected: new Promise((resolve) => socket.once("connect", () => resolve())),
    received: () => received,
    closedAfter: () => (closedAt === null ? null : closedAt - opened),
    closed
  }
}

/** Writes `text` one byte every `everyMs` until the connection closes or `boundMs` pass. */
const dribble = async (raw: Raw, text: string, everyMs: number, boundMs: number) => {
  const until = Date.now() + boundMs
  for (let i = 0; raw.closedAfter() === null && Date.now() < until; i++) {
    if (!raw.socket.destroyed) raw.socket.write(text[i % text.length]!)
    await sleep(everyMs)
  }
}

/** `GET /healthz` on its own connection from `localAddress`: the status line, or what went wrong. */
const healthFrom = (port: number, localAddress: string) =>
  new Promise<string>((resolve) => {
    const raw = rawConnection(port, localAddress)
    raw.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    const timer = setTimeout(() => raw.socket.destroy(), 5_000)
    void raw.closed.then(() => {
      clearTimeout(timer)
      resolve(raw.received().split("\r\n")[0] || "closed without an answer")
    })
  })

describe("the connection settings", () => {
  const read = (settings: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(connectionSettingsConfig, ConfigProvider.fromMap(new Map(Object.entries(settings))))))

  it("default to 15 s for headers, 30 s for the request, 5 s keep-alive, 60 s stalled, 800 connections, 100 per client", () => {
    expect(read({})).toEqual(Either.right(DEFAULT_CONNECTION_SETTINGS))
    expect(DEFAULT_CONNECTION_SETTINGS).toEqual({
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      responseStallTimeoutMs: 60_000,
      maxConnections: 800,
      maxConnectionsPerClient: 100
    })
  })

  it("a value out of range or that contradicts another stops start-up naming the setting", () => {
    const refusal = (settings: Record<string, string>) => {
      const result = read(settings)
      return Either.isLeft(result) ? String(result.left) : "accepted"
    }
    expect(refusal({ HEADERS_TIMEOUT_MS: "0" })).toContain("HEADERS_TIMEOUT_MS")
    expect(refusal({ REQUEST_TIMEOUT_MS: "soon" })).toContain("REQUEST_TIMEOUT_MS")
    expect(refusal({ HEADERS_TIMEOUT_MS: "40000" })).toContain("HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS")
    expect(refusal({ MAX_CONNECTIONS: "50" })).toContain("MAX_CONNECTIONS_PER_CLIENT must not be above MAX_CONNECTIONS")
    expect(refusal({ RESPONSE_STALL_TIMEOUT_MS: "-1" })).toContain("RESPONSE_STALL_TIMEOUT_MS")
    expect(refusal({ MAX_CONNECTIONS: "2000", MAX_CONNECTIONS_PER_CLIENT: "20", KEEP_ALIVE_TIMEOUT_MS: "65000" })).toBe("accepted")
  })
})

describe("a client that sends slowly", () => {
  layer(Served({ HEADERS_TIMEOUT_MS: "1000", REQUEST_TIMEOUT_MS: "2000" }), REAL_TIME)((it) => {
    it.effect("headers sent one byte at a time are cut off (408) once HEADERS_TIMEOUT_MS has passed", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const raw = rawConnection(port)
        yield* Effect.promise(() => raw.connected)
        // A byte every 100 ms would take minutes to finish these headers; the bound is 10 s.
        yield* Effect.promise(() => dribble(raw, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + "a".repeat(10_000), 100, 10_000))
        const after = raw.closedAfter()
        expect(after, "still open after 10 s").not.toBeNull()
        expect(after!).toBeGreaterThanOrEqual(900)
        expect(after!).toBeLessThan(5_000)
        expect(raw.received()).toMatch(/^(HTTP\/1\.1 408 |$)/)
        // The server still answers everyone else.
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.1"))).toBe("HTTP/1.1 200 OK")
      }), 20_000)

    it.effect("a body sent one byte at a time is cut off (408) once REQUEST_TIMEOUT_MS has passed", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const raw = rawConnection(port)
        yield* Effect.promise(() => raw.connected)
        raw.socket.write("POST /auth/magic-link HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
        yield* Effect.promise(() => dribble(raw, " ", 100, 10_000))
        const after = raw.closedAfter()
        expect(after, "still open after 10 s").not.toBeNull()
        expect(after!).toBeGreaterThanOrEqual(1_800)
        expect(after!).toBeLessThan(6_000)
        expect(raw.received()).toMatch(/^(HTTP\/1\.1 408 |$)/)
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.1"))).toBe("HTTP/1.1 200 OK")
      }), 20_000)
  })
})

describe("an idle client", () => {
  layer(Served({ KEEP_ALIVE_TIMEOUT_MS: "700" }), REAL_TIME)((it) => {
    it.effect("a kept-alive connection with no next request is closed after KEEP_ALIVE_TIMEOUT_MS", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const raw = rawConnection(port)
        yield* Effect.promise(() => raw.connected)
        raw.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        for (const until = Date.now() + 5_000; !raw.received().includes("\r\n\r\n") && Date.now() < until;) yield* Effect.promise(() => sleep(10))
        expect(raw.received().split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
        const answeredAfter = Date.now()
        yield* Effect.promise(() => Promise.race([raw.closed, sleep(4_000)]))
        expect(raw.closedAfter(), "still open 4 s after its answer").not.toBeNull()
        const idle = Date.now() - answeredAfter
        expect(idle).toBeGreaterThanOrEqual(500)
      }), 20_000)
  })
})

describe("connections per client", () => {
  // Long timeouts, so that held connections stay open for the whole test.
  layer(Served({ HEADERS_TIMEOUT_MS: "20000", REQUEST_TIMEOUT_MS: "30000", MAX_CONNECTIONS_PER_CLIENT: "5" }), REAL_TIME)((it) => {
    it.effect("beyond MAX_CONNECTIONS_PER_CLIENT a client's new connections are closed at once; another client still gets answers", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const held = Array.from({ length: 5 }, () => rawConnection(port, "127.0.0.1"))
        yield* Effect.promise(() => Promise.all(held.map((h) => h.connected)))
        for (const h of held) h.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        // Let the server accept them (in order) before the next one.
        yield* Effect.promise(() => sleep(300))

        const extra = rawConnection(port, "127.0.0.1")
        extra.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        yield* Effect.promise(() => Promise.race([extra.closed, sleep(5_000)]))
        expect(extra.closedAfter(), "the sixth connection was not closed within 5 s").not.toBeNull()
        expect(extra.received()).toBe("")

        // Another client is answered meanwhile, and so is this client once one of its connections is gone.
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.2"))).toBe("HTTP/1.1 200 OK")
        held[0]!.socket.destroy()
        yield* Effect.promise(() => sleep(300))
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.1"))).toBe("HTTP/1.1 200 OK")
        for (const h of held) h.socket.destroy()
        expect(held.slice(1).every((h) => h.closedAfter() === null || h.received() === "")).toBe(true)
      }), 20_000)
  })

  layer(Served({ HEADERS_TIMEOUT_MS: "20000", REQUEST_TIMEOUT_MS: "30000", MAX_CONNECTIONS: "6", MAX_CONNECTIONS_PER_CLIENT: "3" }), REAL_TIME)((it) => {
    it.effect("beyond MAX_CONNECTIONS new connections are closed at once, whoever opens them", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const held = [...["127.0.0.3", "127.0.0.3", "127.0.0.3"], ...["127.0.0.4", "127.0.0.4", "127.0.0.4"]].map((a) => rawConnection(port, a))
        yield* Effect.promise(() => Promise.all(held.map((h) => h.connected)))
        for (const h of held) h.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        yield* Effect.promise(() => sleep(300))
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.5"))).toBe("closed without an answer")
        held[0]!.socket.destroy()
        yield* Effect.promise(() => sleep(300))
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.5"))).toBe("HTTP/1.1 200 OK")
        for (const h of held) h.socket.destroy()
      }), 20_000)
  })
})

// --- A paid download whose client stops reading -------------------------------------------------------------

/** The upstream archive: endless bytes, counted, and whether (and when) the code host's side was closed. */
const { tarball: endlessArchive, upstream } = endlessTarball(64 * 1024)

const github = await startFakeGithubServer([
  { owner: "Octo-Org", name: "Widget", description: "A widget library", files: { "README.md": "# Widget\n" }, tarball: endlessArchive }
])
const facilitator = await startFakeFacilitator()
afterAll(() => Promise.all([github.close(), facilitator.close()]))

const STALL_MS = 1_500
/** Longer than the request timeout and the stall limit below: neither may cut an answer the server is still making. */
const SETTLE_MS = 2_500

const DownloadApp = Served(
  { HEADERS_TIMEOUT_MS: "500", REQUEST_TIMEOUT_MS: "1000", RESPONSE_STALL_TIMEOUT_MS: String(STALL_MS), GITHUB_API_URL: github.url, X402_FACILITATOR_URL: facilitator.url },
  Layer.merge(
    testPorts({ config: { X402_FACILITATOR_URL: facilitator.url } }),
    // Nothing kept on disk: the endless archive is one no adapter keeps, so the 402's cut stops once it is past
    // what memory holds, and the delivery streams it straight from the code host.
    CodeHostGithub.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["GITHUB_API_URL", github.url], ["ARCHIVE_CACHE_BYTES", "0"]])))))
  )
)

describe("a paid download whose client stops reading", () => {
  layer(DownloadApp, REAL_TIME)((it) => {
    it.effect("is ended once RESPONSE_STALL_TIMEOUT_MS passes without progress, and its code-host download is aborted; a slow settle is not cut", () =>
      Effect.gen(function*() {
        const port = yield* portOf
        const seller = yield* sell("stall@example.com", { price_usd: "1.00", wallet_base: BASE_WALLET })
        const { required } = yield* challenge(seller.live)
        const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))
        const path = new URL(seller.live).pathname

        facilitator.settle = { delayMs: SETTLE_MS }
        const raw = rawConnection(port)
        yield* Effect.promise(() => raw.connected)
        const sentAt = Date.now()
        raw.socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nPayment-Signature: ${b64(signature)}\r\nConnection: close\r\n\r\n`)
        // Read until the archive starts coming, then stop reading.
        for (const until = Date.now() + 15_000; !raw.received().includes("\r\n\r\n") && Date.now() < until;) yield* Effect.promise(() => sleep(20))
        expect(raw.received().split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
        // The settle took longer than REQUEST_TIMEOUT_MS and RESPONSE_STALL_TIMEOUT_MS: neither cut the answer.
        expect(Date.now() - sentAt).toBeGreaterThanOrEqual(SETTLE_MS)
        raw.socket.pause()
        const stoppedAt = Date.now()

        // Loopback buffers fill, then nothing moves: the server must end the answer and abort the download.
        for (const until = Date.now() + 20_000; upstream.closedAt === null && Date.now() < until;) yield* Effect.promise(() => sleep(50))
        expect(upstream.closedAt, `the code host's download was still open 20 s after the client stopped reading (${upstream.sent} bytes sent)`).not.toBeNull()
        expect(upstream.closedAt! - stoppedAt).toBeGreaterThanOrEqual(STALL_MS - 100)
        const sentWhenAborted = upstream.sent
        yield* Effect.promise(() => sleep(500))
        expect(upstream.sent).toBe(sentWhenAborted)

        // The client's connection was ended too: reading again finds its end, well short of an endless archive.
        raw.socket.resume()
        yield* Effect.promise(() => Promise.race([raw.closed, sleep(10_000)]))
        expect(raw.closedAfter(), "the client's connection was still open").not.toBeNull()
        expect(raw.received().length).toBeLessThan(sentWhenAborted + 64 * 1024)
        // Nothing else on the server was harmed.
        expect(yield* Effect.promise(() => healthFrom(port, "127.0.0.1"))).toBe("HTTP/1.1 200 OK")
      }), 60_000)
  })
})

/**
 * What the benchmarks share: the repomarket HTTP app started in this process on a real loopback port, on
 * PostgreSQL (a fresh database `repomarket_bench_<random>`, migrated by StorageSql, dropped on close) or, when
 * PostgreSQL cannot be reached, on embedded PGlite with a loud warning; an in-memory code host seeded with the
 * repos a bench needs; the simulated facilitator behind the test twin; memory mail; a test secret box.
 *
 * Also here: a loopback x402 facilitator (`startLoopbackFacilitator`) for the live checkout and for the
 * @x402/express baseline, so no benchmark ever needs the network.
 */
import { randomBytes } from "node:crypto"
import { type ChildProcess, fork } from "node:child_process"
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Context, Effect, Either, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import { getAddress, type Hex, keccak256 } from "viem"
import { ChainsLive } from "../adapters/chains/ChainsLive.js"
import { ReceiptSignerTest } from "../adapters/crypto/ReceiptSignerEd25519.js"
import { SecretBoxTest } from "../adapters/crypto/SecretBoxAesGcm.js"
import { eip3009Key, evmChainId, parseEip3009Payment, verifyEip3009Signature } from "../adapters/evm/EvmPayment.js"
import { CodeHostIdentityMemory } from "../adapters/memory/CodeHostIdentityMemory.js"
import { CodeHostMemory, type FakeRepo } from "../adapters/memory/CodeHostMemory.js"
import { MailerMemory, SentMail } from "../adapters/memory/MailerMemory.js"
import { PackagerTarGz } from "../adapters/packaging/PackagerTarGz.js"
import { WalletProofSiwx } from "../adapters/x402/WalletProofSiwx.js"
import { StorageSql } from "../adapters/sql/SqlLive.js"
import { WebhookSenderHttp } from "../adapters/webhook/WebhookSenderHttp.js"
import { PaymentFacilitatorLive } from "../adapters/x402/PaymentFacilitatorLive.js"
import { HttpLive } from "../app/AppLayer.js"
import { StorageMemory } from "../adapters/memory/StorageMemory.js"
import { FrontDoorLive } from "../app/FrontDoor.js"
import { NodeServerWithFrontDoor } from "../hosts/node/FrontDoorServer.js"
import { PublicOrigin } from "../ports/PublicOrigin.js"
import { RateLimiter } from "../ports/RateLimiter.js"
import { pgliteTestDatabase } from "../test/support/pglite.js"
import { postgresProblem, shownUrl, TEST_DATABASE_URL } from "../test/support/postgres.js"
import type { Reply, Request } from "./load-client.js"

export const MiB = 1024 * 1024

/** Payout address of every bench listing (a well-formed address; nothing is ever sent there). */
export const BENCH_WALLET = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

/** A repo whose archive (as CodeHostMemory streams it: `<sha7> <path>\n<content>\n`) is exactly `bytes` long. */
export const repoWithArchiveOf = (owner: string, name: string, bytes: number): FakeRepo => {
  const path = "data.txt"
  const overhead = `0123456 ${path}\n`.length + 1
  if (bytes === 0) return { owner, name, files: {} }
  if (bytes < overhead) throw new Error(`an archive needs at least ${overhead} bytes`)
  // Printable, incompressible enough to be honest, built once per process.
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
  const random = randomBytes(bytes - overhead)
  let content = ""
  for (let i = 0; i < random.length; i += 64 * 1024) {
    content += Array.from(random.subarray(i, i + 64 * 1024), (b) => alphabet[b % alphabet.length]).join("")
  }
  return { owner, name, description: `bench repo, ${bytes} byte archive`, files: { [path]: content } }
}

// ---------------------------------------------------------------------------------------------------------
// Storage: PostgreSQL, or PGlite said loudly.

export type StorageKind = "PostgreSQL" | "PGlite" | "memory"

type Database = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>

const admin = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), connectTimeout: "3 seconds", maxConnections: 1 }))
  )

const databaseUrl = (name: string) => {
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/** A fresh PostgreSQL database for this run, dropped (with its connections) when the scope closes. */
const postgresBenchDatabase = (maxConnections: number): Database =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const name = `repomarket_bench_${randomBytes(6).toString("hex")}`
    yield* Effect.acquireRelease(
      admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)),
      () =>
        admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).pipe(
          Effect.tap(() => Effect.sync(() => console.log(`  (dropped database ${name})`))),
          Effect.catchAll((error) => Effect.sync(() => console.error(`Could not drop bench database ${name}:`, error)))
        )
    )
    console.log(`  database: PostgreSQL ${shownUrl(databaseUrl(name))} (pool of ${maxConnections})`)
    return PgClient.layer({ url: Redacted.make(databaseUrl(name)), maxConnections, applicationName: "repomarket-bench" })
  }))

const LOUD = "!".repeat(100)

const chooseDatabase = async (maxConnections: number): Promise<{ kind: StorageKind; layer: Database }> => {
  const problem = await postgresProblem()
  if (problem === undefined) return { kind: "PostgreSQL", layer: postgresBenchDatabase(maxConnections) }
  console.log(LOUD)
  console.log(`!! PostgreSQL NOT reachable at ${shownUrl()} (${problem}).`)
  console.log("!! FALLING BACK TO EMBEDDED PGlite: numbers below are NOT PostgreSQL numbers and do not answer")
  console.log("!! the PostgreSQL target. Start PostgreSQL (or set TEST_DATABASE_URL) and run again.")
  console.log(LOUD)
  return { kind: "PGlite", layer: pgliteTestDatabase() }
}

// ---------------------------------------------------------------------------------------------------------
// The app.

export interface BenchAppOptions {
  readonly repos: ReadonlyArray<FakeRepo>
  /** A live facilitator (`X402_FACILITATOR_URL`); without it live checkouts answer 503, as configured servers do. */
  readonly facilitatorUrl?: string
  /** PostgreSQL pool size (default 20). */
  readonly maxConnections?: number
  /** `RESPONSE_CACHE_MS` of the front door (default 2000 as in `npm start`; 0 sends every request to the app). */
  readonly responseCacheMs?: number
  /** "memory": every storage port in memory, no database at all (to separate the database's cost). */
  readonly storage?: "sql" | "memory"
  /** More settings of the app (e.g. `CATALOG_CONCURRENCY`), over the defaults above. */
  readonly settings?: Readonly<Record<string, string>>
}

export interface Listed {
  readonly repo: string
  readonly checkoutUrl: string
  readonly testCheckoutUrl: string
  readonly checkoutId: string
}

export interface BenchApp {
  readonly origin: string
  readonly storage: StorageKind
  /** Signs in by magic link (mail read from the memory mailer) and returns an API key. */
  readonly apiKey: (email: string) => Promise<string>
  /** `POST /repos` with a price and a Base wallet; checkout URLs are absolute on this app's origin. */
  readonly list: (key: string, repo: FakeRepo, priceUsd: string) => Promise<Listed>
  /** Sales of a checkout (live or test) in the database, by status. */
  readonly salesOf: (checkoutId: string, livemode: boolean) => Promise<Record<string, number>>
  /** Runs statements on the app's own database (seeding); fails when storage is in memory. */
  readonly withSql: <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
  /** Stops the server, closes the pool, drops the database. */
  readonly close: () => Promise<void>
}

/** A free loopback port: the app's public origin must name the port it is served on. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

const expectStatus = async (res: Response, status: number, what: string) => {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${await res.text()}`)
  return res.json() as Promise<any>
}

/**
 * Starts repomarket as `npm start` would, with bench adapters. Info logs (one access-log line per request)
 * are off: at thousands of requests per second they would measure the terminal, not the app.
 */
export const startBenchApp = async (options: BenchAppOptions): Promise<BenchApp> => {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const database = options.storage === "memory"
    ? { kind: "memory" as const, layer: Layer.empty as unknown as Database }
    : await chooseDatabase(options.maxConnections ?? 20)
  const config = ConfigProvider.fromMap(new Map([
    // A benchmark never reads a public chain RPC.
    ["BASE_RPC_URL", "off"],
    ["SOLANA_RPC_URL", "off"],
    // One loopback client drives the load: the per-client limit on public pages would measure 429s.
    ["PUBLIC_PAGES_PER_MINUTE", "0"] as const,
    ...(options.facilitatorUrl ? [["X402_FACILITATOR_URL", options.facilitatorUrl] as const] : []),
    ...(options.responseCacheMs === undefined ? [] : [["RESPONSE_CACHE_MS", String(options.responseCacheMs)] as const]),
    ...Object.entries(options.settings ?? {})
  ]))

  const ports = Layer.mergeAll(
    options.storage === "memory" ? StorageMemory : StorageSql,
    CodeHostMemory(options.repos),
    CodeHostIdentityMemory(),
    ChainsLive,
    SecretBoxTest,
    MailerMemory,
    // One load client stands for many buyers here: the per-client limits (payment attempts at checkouts: 60 a
    // minute) would measure the limiter, not the server. They are tested in test/http.
    Layer.succeed(RateLimiter, { consume: () => Effect.void }),
    WebhookSenderHttp,
    Layer.succeed(PublicOrigin, { baseUrl: origin }),
    ReceiptSignerTest.pipe(Layer.provide(Layer.succeed(PublicOrigin, { baseUrl: origin }))),
    PaymentFacilitatorLive,
    PackagerTarGz,
    WalletProofSiwx
  )
  const app = HttpLive.pipe(
    Layer.provideMerge(ports),
    // As `npm start` serves: the front door answers repo-page JSON and 402 challenges it has remembered.
    Layer.provideMerge(NodeServerWithFrontDoor({ port, host: "127.0.0.1" })),
    Layer.provideMerge(FrontDoorLive),
    Layer.provideMerge(database.layer),
    Layer.provide(Layer.setConfigProvider(config))
  )

  const scope = Effect.runSync(Scope.make())
  const built = await Effect.runPromiseExit(
    Layer.buildWithScope(app, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
  )
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, built))
    throw new Error(`the app did not start: ${String(built.cause)}`)
  }
  const context = built.value
  const sql = Context.getOption(context, SqlClient.SqlClient)
  const mail = Context.get(context, SentMail)
  const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
  if (address.port !== port) throw new Error(`served on ${address.port}, expected ${port}`)

  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body)
    })

  const apiKey = async (email: string) => {
    await expectStatus(await post("/auth/magic-link", { email }), 202, "magic link")
    const last = Option.getOrThrow(await Effect.runPromise(mail.last))
    const token = decodeURIComponent(/[?&]token=([^\s&]+)/.exec(last.text)![1]!)
    const verified = await expectStatus(await post("/auth/verify", { token }), 200, "verify")
    const created = await expectStatus(await post("/my/keys", {}, verified.access_token), 201, "create key")
    return created.key as string
  }

  const list = async (key: string, repo: FakeRepo, priceUsd: string): Promise<Listed> => {
    const body = { host_url: `https://github.com/${repo.owner}/${repo.name}`, price_usd: priceUsd, wallet_base: BENCH_WALLET }
    const listed = await expectStatus(await post("/repos", body, key), 201, `list ${repo.owner}/${repo.name}`)
    const checkoutUrl = listed.checkout_url as string
    const testCheckoutUrl = listed.test_checkout_url as string
    if (!checkoutUrl.startsWith(`${origin}/`) || !testCheckoutUrl.startsWith(`${origin}/`)) {
      throw new Error(`checkout URLs are not on ${origin}: ${checkoutUrl}, ${testCheckoutUrl}`)
    }
    return { repo: listed.repo, checkoutUrl, testCheckoutUrl, checkoutId: new URL(checkoutUrl).pathname.split("/")[2]! }
  }

  const salesOf = async (checkoutId: string, livemode: boolean) => {
    if (Option.isNone(sql)) throw new Error("no database: storage is in memory")
    const rows = await Effect.runPromise(
      sql.value<{ status: string; n: string }>`SELECT status, count(*)::text AS n FROM sales
        WHERE checkout_id = ${checkoutId} AND livemode = ${livemode} GROUP BY status`
    )
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
  }

  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }

  const withSql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => {
    if (Option.isNone(sql)) throw new Error("no database: storage is in memory")
    return Effect.runPromise(f(sql.value))
  }

  return { origin, storage: database.kind, apiKey, list, salesOf, withSql, close }
}

// ---------------------------------------------------------------------------------------------------------
// A loopback x402 facilitator.

export interface LoopbackFacilitator {
  readonly url: string
  /** Requests seen per path, to show that a 402 calls nobody. */
  readonly counts: () => Readonly<Record<string, number>>
  readonly close: () => Promise<void>
}

const readJson = (req: IncomingMessage) =>
  new Promise<any>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (e) {
        reject(e)
      }
    })
    req.on("error", reject)
  })

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text)
}

/**
 * The x402 facilitator HTTP API (`GET /supported`, `POST /verify`, `POST /settle`) on loopback, for the
 * `exact` EVM scheme on the given networks. It checks what the simulated facilitator checks (recipient,
 * value, validity window, the EIP-712 signature really recovered with viem, nonce unused) and settles by
 * marking the nonce used: no chain, no balances. The Express baseline only reads its `/supported`. It runs in this process, so its CPU counts against the
 * app's, as the in-process simulated facilitator's does.
 */
export const startLoopbackFacilitator = async (networks: ReadonlyArray<string>): Promise<LoopbackFacilitator> => {
  const counts: Record<string, number> = {}
  const used = new Set<string>()
  const verdicts = new Map<string, boolean>()

  const check = async (body: any): Promise<{ ok: true; payer: string; key: string; signature: Hex } | { ok: false; reason: string; payer?: string }> => {
    const requirements = body?.paymentRequirements
    const parsed = parseEip3009Payment(body?.paymentPayload?.payload)
    if (Either.isLeft(parsed)) return { ok: false, reason: parsed.left.reason }
    const payment = parsed.right
    const payer = payment.authorization.from
    const chainId = evmChainId(String(requirements?.network))
    if (chainId === undefined || !networks.includes(requirements.network)) return { ok: false, reason: "unsupported_network", payer }
    if (getAddress(String(requirements.payTo).toLowerCase()) !== payment.authorization.to) return { ok: false, reason: "invalid_exact_evm_recipient_mismatch", payer }
    if (payment.authorization.value !== BigInt(requirements.amount ?? requirements.maxAmountRequired)) return { ok: false, reason: "invalid_exact_evm_payload_authorization_value_mismatch", payer }
    const now = BigInt(Math.floor(Date.now() / 1000))
    if (payment.authorization.validBefore < now + 6n) return { ok: false, reason: "invalid_exact_evm_payload_authorization_valid_before", payer }
    if (payment.authorization.validAfter > now) return { ok: false, reason: "invalid_exact_evm_payload_authorization_valid_after", payer }
    const domain = {
      name: String(requirements.extra?.name),
      version: String(requirements.extra?.version),
      chainId,
      verifyingContract: getAddress(String(requirements.asset).toLowerCase())
    }
    // As the simulated facilitator does: settle reuses the verdict verify reached on the same signature.
    const verdictKey = JSON.stringify([domain, payment.signature, Object.values(payment.authorization).map(String)])
    const signed = verdicts.get(verdictKey) ?? await verifyEip3009Signature(payment, domain)
    if (verdicts.size >= 4096) verdicts.delete(verdicts.keys().next().value!)
    verdicts.set(verdictKey, signed)
    if (!signed) return { ok: false, reason: "invalid_exact_evm_signature", payer }
    const key = `${requirements.network}|${eip3009Key(payment.authorization)}`
    if (used.has(key)) return { ok: false, reason: "invalid_exact_evm_nonce_already_used", payer }
    return { ok: true, payer, key, signature: payment.signature }
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!
    counts[path] = (counts[path] ?? 0) + 1
    if (req.method === "GET" && path === "/supported") {
      send(res, 200, { kinds: networks.map((network) => ({ x402Version: 2, scheme: "exact", network })), extensions: [], signers: {} })
      return
    }
    if (req.method !== "POST" || (path !== "/verify" && path !== "/settle")) {
      send(res, 404, { error: "not found" })
      return
    }
    readJson(req).then(async (body) => {
      const network = String(body?.paymentRequirements?.network)
      const result = await check(body)
      if (path === "/verify") {
        send(res, 200, result.ok ? { isValid: true, payer: result.payer } : { isValid: false, invalidReason: result.reason, payer: result.payer ?? "" })
        return
      }
      if (!result.ok) {
        send(res, 200, { success: false, errorReason: result.reason, payer: result.payer ?? "", transaction: "", network })
        return
      }
      // Checked and marked with no await in between: one nonce settles once.
      if (used.has(result.key)) {
        send(res, 200, { success: false, errorReason: "invalid_exact_evm_nonce_already_used", payer: result.payer, transaction: "", network })
        return
      }
      used.add(result.key)
      send(res, 200, { success: true, payer: result.payer, transaction: keccak256(result.signature), network })
    }).catch(() => send(res, 400, { error: "bad request" }))
  })
  server.keepAliveTimeout = 30_000
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

export const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

/** Numbers for humans: thousands separated, a fixed number of decimals. */
export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
export const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 1)} ms`
export const section = (title: string) => console.log(`\n== ${title}`)

/** Whatever hangs, the run ends: exits with 3 after `budgetSeconds`. */
export const startWatchdog = (budgetSeconds: number) =>
  setTimeout(() => {
    console.error(`WATCHDOG: the run took over ${budgetSeconds} s; stopping.`)
    process.exit(3)
  }, budgetSeconds * 1000).unref()

export const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** Runs a bench script's cleanups newest first, each on its own (one failing does not skip the rest). */
export const teardown = async (cleanups: Array<() => Promise<unknown> | unknown>, started: number) => {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup()
    } catch (e) {
      console.error("cleanup failed:", e)
    }
  }
  console.log(`  done in ${fmt((performance.now() - started) / 1000, 1)} s`)
}

/** Runs a bench script's main and exits with its status (a crash is status 1). */
export const runMain = (main: () => Promise<void>) =>
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (e) => {
      console.error(e)
      process.exit(1)
    }
  )

// ---------------------------------------------------------------------------------------------------------
// Load: the load client process (bench/load-client.ts), the server-side sampler, a bare baseline server.

/** Forks the load client (without the profiler flags of this process) and talks to it one request at a time. */
export const startLoadClient = () => {
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--cpu-prof") && !a.startsWith("--heap-prof"))
  const child: ChildProcess = fork(fileURLToPath(new URL("./load-client.ts", import.meta.url)), [], {
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  let exited = false
  child.on("exit", () => void (exited = true))
  const ask = <T extends Reply["type"]>(request: Request, expected: T) =>
    new Promise<Extract<Reply, { type: T }>>((resolve, reject) => {
      if (exited) return reject(new Error("the load client has exited"))
      const onExit = () => reject(new Error("the load client exited"))
      child.once("exit", onExit)
      child.once("message", (reply: Reply) => {
        child.off("exit", onExit)
        if (reply.type === expected) resolve(reply as Extract<Reply, { type: T }>)
        else reject(new Error(reply.type === "error" ? `load client: ${reply.message}` : `unexpected reply ${reply.type}`))
      })
      child.send(request)
    })
  const stop = () => {
    if (!exited) child.send({ type: "exit" } satisfies Request)
    setTimeout(() => !exited && child.kill(), 1000).unref()
  }
  return { ask, stop }
}
export type LoadClient = ReturnType<typeof startLoadClient>

/** CPU of this process (the servers) and its event-loop use over a phase. */
export const sampler = () => {
  const cpu0 = process.cpuUsage()
  const elu0 = performance.eventLoopUtilization()
  const t0 = performance.now()
  return () => {
    const cpu = process.cpuUsage(cpu0)
    const elu = performance.eventLoopUtilization(elu0)
    const cpuMs = (cpu.user + cpu.system) / 1000
    // Event loop busy but CPU share low: the process was waiting for a core (other work on the machine).
    return { cpuMs, elu: elu.utilization, cpuShare: cpuMs / (performance.now() - t0) }
  }
}

/** A bare node:http server answering every request with exactly the given status, headers and body: the ceiling. */
export const startBareServer = async (status: number, headers: OutgoingHttpHeaders, body: Uint8Array, path: string) => {
  const server = createServer((_req, res) => {
    res.writeHead(status, headers).end(body)
  })
  const port = await listen(server)
  return { url: `http://127.0.0.1:${port}${path}`, close: () => closeServer(server) }
}

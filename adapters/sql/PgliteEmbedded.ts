import { mkdtemp, rm } from "node:fs/promises"
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, type Scope } from "effect"
import { importOptional } from "../../codec/OptionalPackages.js"
import { EmbeddedDatabaseError, lockDataDir } from "./DataDirLock.js"

/**
 * Embedded PostgreSQL (PGlite, compiled to WebAssembly) reached through the same @effect/sql-pg driver as a
 * real server: PGLiteSocketServer speaks the wire protocol on a private unix socket (loopback TCP on Windows).
 *
 * Caveat: every connection shares PGlite's single PostgreSQL session. The socket server queues statements
 * and, while one connection is inside a transaction, runs only that connection's statements, so
 * transactions run one at a time and `FOR UPDATE SKIP LOCKED` never has anything to skip. Correct, but
 * serial: fine for a single host, not a substitute for PostgreSQL when several hosts share a database.
 * It follows that code inside a transaction must never wait for a statement issued outside it (from a fiber
 * that does not share the transaction): that statement only runs once the transaction ends.
 */

/** Pool size; the socket server accepts twice as many so a pool reconnecting never finds it full. */
const POOL_SIZE = 4

/** PGlite and its socket server: optional peer dependencies, imported when the embedded database first opens. */
const PGLITE_PACKAGES = ["@electric-sql/pglite", "@electric-sql/pglite-socket"] as const

const loadPglite = Effect.tryPromise({
  try: () =>
    importOptional(
      "The embedded database (no DATABASE_URL set)",
      PGLITE_PACKAGES,
      () => Promise.all([import("@electric-sql/pglite"), import("@electric-sql/pglite-socket")])
    ),
  catch: (cause) =>
    new EmbeddedDatabaseError({
      message: `${cause instanceof Error ? cause.message : String(cause)}; or set DATABASE_URL to a PostgreSQL server`
    })
})

/** Options of the embedded PGlite database. */
export interface PgliteEmbeddedOptions {
  /** Where PGlite keeps its files; created if missing. Opening a fresh one takes seconds, reopening far less. */
  readonly dataDir: string
}

const attempt = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => new EmbeddedDatabaseError({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}` })
  })

/** Opens PGlite and serves it; returns where to connect. Everything is closed when the scope closes. */
export const servePglite = (
  options: PgliteEmbeddedOptions
): Effect.Effect<{ readonly host: string; readonly port: number }, EmbeddedDatabaseError, Scope.Scope> =>
  Effect.gen(function*() {
    const dataDir = resolve(options.dataDir)
    yield* Effect.try({
      try: () => mkdirSync(dataDir, { recursive: true, mode: 0o700 }),
      catch: (cause) => new EmbeddedDatabaseError({ message: `Cannot create ${dataDir}: ${String(cause)}` })
    })
    const [{ PGlite }, { PGLiteSocketServer }] = yield* loadPglite
    yield* lockDataDir(dataDir)
    const db = yield* Effect.acquireRelease(
      attempt(`Cannot open the embedded database in ${dataDir}`, () => PGlite.create(dataDir)),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const useTcp = process.platform === "win32"
    // A fresh private directory (mode 0700) for the socket: no stale socket file after a crash, and no other
    // local user can connect. The PostgreSQL client finds the socket as `<host>/.s.PGSQL.<port>`.
    const socketDir = useTcp ? "" : yield* Effect.acquireRelease(
      attempt("Cannot create a socket directory", () => mkdtemp(join(tmpdir(), "repomarket-pg-"))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })).pipe(Effect.ignore)
    )
    const server = yield* Effect.acquireRelease(
      attempt("Cannot serve the embedded database", async () => {
        const server = new PGLiteSocketServer({
          db,
          maxConnections: POOL_SIZE * 2,
          ...(useTcp ? { host: "127.0.0.1", port: 0 } : { path: join(socketDir, ".s.PGSQL.5432") })
        })
        await server.start()
        return server
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    if (!useTcp) return { host: socketDir, port: 5432 }
    const port = Number(server.getServerConn().split(":").pop())
    return { host: "127.0.0.1", port }
  })

/** A PgClient (and SqlClient) on an embedded PGlite kept in `dataDir`. */
export const pgliteEmbedded = (options: PgliteEmbeddedOptions) =>
  Layer.unwrapScoped(
    Effect.map(servePglite(options), ({ host, port }) =>
      PgClient.layer({
        host,
        port,
        username: "postgres",
        database: "postgres",
        maxConnections: POOL_SIZE,
        applicationName: "repomarket"
      }))
  )

/** The embedded database under `<DATA_DIR>/pg` (DATA_DIR defaults to `./.data`). */
export const PgliteEmbeddedLive = Layer.unwrapEffect(
  Effect.map(
    Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
    (dataDir) => pgliteEmbedded({ dataDir: join(dataDir, "pg") })
  )
)

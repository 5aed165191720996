import cluster, { type Worker } from "node:cluster"
import { availableParallelism } from "node:os"
import { type LogFormat, primaryLine, printFatal } from "./LogLines.js"

/*
 * `WORKERS`: how many server processes `npm start` runs on one port (node:cluster; the primary only supervises).
 * Default 1: the default storage is the embedded PGlite, which one process owns, and a machine shared with
 * its database and other services should be given more processes by its operator, not take every core on its
 * own. `auto` means one per core (os.availableParallelism()). More than one needs DATABASE_URL.
 * Read from the environment directly: the primary never builds the Effect app.
 */

/** The number of server processes, or an error naming the setting. */
export const workersFromEnv = (env: NodeJS.ProcessEnv = process.env): number => {
  const raw = (env["WORKERS"] ?? "").trim()
  const n = raw === "" ? 1 : raw === "auto" ? availableParallelism() : /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`WORKERS must be a whole number from 1 to 256, or auto (got ${JSON.stringify(raw)})`)
  const shared = (env["DATABASE_URL"] ?? "").trim() !== ""
  if (n > 1 && !shared) throw new Error("WORKERS above 1 needs DATABASE_URL: the embedded database (PGlite) serves one process")
  return n
}

/**
 * The cluster's primary: forks `count` workers (each runs the whole server: app, front door, webhook and
 * reconcile workers), replaces one that dies unexpectedly (after a pause, so a crash loop does not spin),
 * and on SIGTERM or SIGINT passes SIGTERM to each worker (each drains: see Lifecycle) and exits once all are
 * gone. A worker that exits before it ever listened (a bad setting, no database) stops the whole cluster with
 * its exit code: replacing it would fail the same way; what stopped it is printed once, by the primary, however
 * many workers stopped alike (see {@link tellPrimaryFatal}). `onAnswering` runs once, when the first worker says
 * it answers (see {@link tellPrimaryAnswering}): where `npm start` prints its banner.
 */
export const runPrimary = (count: number, format: LogFormat = "pretty", onAnswering: () => void = () => {}): void => {
  const log = (message: string) => console.log(primaryLine(format, message))
  let stopping = false
  let answered = false
  let toldWhy = false
  const listened = new WeakSet<Worker>()
  const fork = () => cluster.fork()
  cluster.on("listening", (worker) => listened.add(worker))
  cluster.on("message", (worker, message: unknown) => {
    if (isMessage(message, ANSWERING) && !answered) {
      answered = true
      onAnswering()
    }
    // Workers that never listened stop alike (a setting, the database): one of them says why.
    if (isMessage(message, FATAL) && (listened.has(worker) || !toldWhy)) {
      toldWhy ||= !listened.has(worker)
      const lines = (message as { readonly lines?: unknown }).lines
      printFatal(format, Array.isArray(lines) ? lines.map(String) : [])
    }
  })
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log("all workers stopped")
        // 0 after a SIGTERM; the failing worker's code when one stopped before it listened (exitCode, below).
        process.exit()
      }
      return
    }
    if (!listened.has(worker)) {
      log(`worker ${worker.process.pid} exited (${code ?? signal}) before it listened; stopping`)
      stopping = true
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill("SIGTERM")
      process.exitCode = code === 0 || code === null ? 1 : code
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit()
      return
    }
    log(`worker ${worker.process.pid} exited (${code ?? signal}); starting another in 1 s`)
    setTimeout(() => stopping || fork(), 1_000)
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log(`${signal}: stopping ${Object.keys(cluster.workers ?? {}).length} workers`)
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM")
  }
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))
  log(`starting ${count} workers`)
  for (let i = 0; i < count; i++) fork()
}

const ANSWERING = "repomarket:answering"
const FATAL = "repomarket:fatal"

const isMessage = (message: unknown, type: string): boolean =>
  typeof message === "object" && message !== null && (message as { readonly type?: unknown }).type === type

/** A worker's word to its primary that it answers requests (its app is built and listening). */
export const tellPrimaryAnswering = (): void => {
  process.send?.({ type: ANSWERING })
}

/** A worker's word to its primary of why it stops (the primary prints it once for all); resolves once sent. */
export const tellPrimaryFatal = (lines: ReadonlyArray<string>): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined) return resolve()
    process.send({ type: FATAL, lines }, undefined, {}, () => resolve())
  })

/** Whether this process should supervise workers rather than serve. */
export const isClusterPrimary = (count: number): boolean => count > 1 && cluster.isPrimary

/*
 * A private PostgreSQL cluster for fault tests that stop and start the database: initdb into a temporary
 * directory, served on a free loopback port with its unix socket inside that directory, trust auth. The
 * machine's shared server (127.0.0.1:5432, used by other test files at the same time) is never touched:
 * every pg_ctl call names this cluster's own data directory. As root, the binaries run as the `postgres` OS
 * user (initdb refuses root); otherwise as the current user. No Effect or vitest here.
 */
import { execFile } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { chown, mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { closedPort } from "./fakeFacilitator.js"

const run = promisify(execFile)

export interface PrivateCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  readonly port: number
  /** Its data directory (postmaster.pid is there). */
  readonly dataDir: string
  /** `pg_ctl stop -m <mode>`: `fast` disconnects clients and shuts down cleanly, `immediate` is a crash. */
  readonly stop: (mode?: "fast" | "immediate") => Promise<void>
  /** Starts it again on the same port and data directory; resolves once it accepts connections. */
  readonly start: () => Promise<void>
  /** Stops it (if running) and removes its directory. */
  readonly destroy: () => Promise<void>
  /** The server log so far (for failure messages). */
  readonly log: () => Promise<string>
}

/** `/usr/lib/postgresql/<newest>/bin`, or undefined. */
export const postgresBinDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a))
  return versions.length === 0 ? undefined : join(root, versions[0]!, "bin")
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** The command line for a PostgreSQL binary, as `postgres` when we are root. */
const as = (bin: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, [...args]]

const exec = async (bin: string, args: ReadonlyArray<string>, timeoutMs = 60_000) => {
  const [file, argv] = as(bin, args)
  try {
    return await run(file, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: "C" } })
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message?: string }
    throw new Error(`${[file, ...argv].join(" ")} failed: ${err.message ?? ""}\n${err.stderr ?? ""}${err.stdout ?? ""}`)
  }
}

/** Creates and starts a private cluster; throws with the reason when that is not possible here. */
export const startPrivateCluster = async (): Promise<PrivateCluster> => {
  const bin = postgresBinDir()
  if (bin === undefined) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
  const dir = await mkdtemp(join(tmpdir(), "repomarket-pgfault-"))
  const data = join(dir, "data")
  const logFile = join(dir, "server.log")
  let running = false
  let port = 0
  const pgCtl = join(bin, "pg_ctl")
  const destroy = async () => {
    if (running) await exec(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined)
    running = false
    await rm(dir, { recursive: true, force: true })
  }
  try {
    if (isRoot()) {
      const { stdout } = await run("id", ["-u", "postgres"])
      const { stdout: gid } = await run("id", ["-g", "postgres"])
      await chown(dir, Number(stdout.trim()), Number(gid.trim()))
    }
    await exec(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
    const start = async () => {
      // -w waits until the server accepts connections. Only loopback TCP and a socket inside `dir`.
      await exec(pgCtl, [
        "-D", data, "-l", logFile, "-w", "-t", "30",
        "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`,
        "start"
      ])
      running = true
    }
    for (let attempt = 0; ; attempt++) {
      port = await closedPort()
      try {
        await start()
        break
      } catch (e) {
        // Someone took the port between the probe and the start: try another.
        if (attempt >= 2) throw e
      }
    }
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dataDir: data,
      stop: async (mode = "fast") => {
        await exec(pgCtl, ["-D", data, "-m", mode, "-w", "-t", "30", "stop"])
        running = false
      },
      start,
      destroy,
      log: () => readFile(logFile, "utf8").catch(() => "")
    }
  } catch (e) {
    await destroy()
    throw e
  }
}

import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs"
import { join, resolve } from "node:path"
import { Data, Effect, type Scope } from "effect"

/** The embedded database could not be opened or served. */
export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{ readonly message: string }> {}

const heldHere = new Set<string>()

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const tryCreate = (file: string): boolean => {
  try {
    const fd = openSync(file, "wx", 0o600)
    writeSync(fd, String(process.pid))
    closeSync(fd)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

const holderOf = (file: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * PGlite does not lock its files, and two processes on one data directory would corrupt it. This lock file
 * holds the owner's pid; a lock left by a process that died (e.g. SIGKILL) is taken over.
 */
export const lockDataDir = (dir: string): Effect.Effect<void, EmbeddedDatabaseError, Scope.Scope> => {
  const key = resolve(dir)
  const file = join(key, "repomarket.lock")
  const acquire = Effect.try({
    try: () => {
      if (heldHere.has(key)) throw new Error(`${key} is already open in this process`)
      if (!tryCreate(file)) {
        const pid = holderOf(file)
        if (pid !== undefined && pid !== process.pid && isRunning(pid)) {
          throw new Error(`${key} is in use by process ${pid}`)
        }
        unlinkSync(file)
        if (!tryCreate(file)) throw new Error(`${key} was locked by another process while starting`)
      }
      heldHere.add(key)
    },
    catch: (error) => new EmbeddedDatabaseError({ message: `Cannot lock the embedded database: ${(error as Error).message}` })
  })
  const release = Effect.sync(() => {
    heldHere.delete(key)
    if (holderOf(file) === process.pid) {
      try {
        unlinkSync(file)
      } catch {
        // Already gone: nothing to release.
      }
    }
  })
  return Effect.acquireRelease(acquire, () => release)
}

/*
 * `npm run demo` as a child process, as a newcomer runs it: through npm, in its own process group (npm, sh and
 * node alike), with only PATH and HOME from this run, so no DATABASE_URL, GITHUB_TOKEN or SMTP_URL leaks in.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "../..")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface DemoProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the exit code once npm is gone. */
  readonly exited: Promise<number | null>
  /** Resolves once `found` holds of stdout; fails with the output if the demo exits first or `ms` pass. */
  readonly waitFor: (found: (stdout: string) => boolean, ms: number) => Promise<void>
  /**
   * `signal` to the whole process group, then waits (at most 10 s) until every process of it is gone: npm may
   * exit on the signal before the server under it has closed its port.
   */
  readonly kill: (signal?: NodeJS.Signals) => Promise<void>
}

/** Whether any process of the group led by `pid` is still running (signal 0 only asks). */
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/** Starts `npm run demo -- <args>` with `env` on top of PATH and HOME. */
export const startDemo = (args: ReadonlyArray<string>, env: Record<string, string>): DemoProcess => {
  const child = spawn("npm", ["run", "--silent", "demo", "--", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor: async (found, ms) => {
      const until = Date.now() + ms
      while (!found(stdout)) {
        if (child.exitCode !== null) throw new Error(`the demo exited (${child.exitCode}):\n${stdout}\n${stderr}`)
        if (Date.now() > until) throw new Error(`not within ${ms} ms:\n${stdout}\n${stderr}`)
        await sleep(50)
      }
    },
    kill: async (signal = "SIGKILL") => {
      try {
        process.kill(-child.pid!, signal)
      } catch {
        // Already gone.
      }
      await Promise.race([exited, sleep(10_000)])
      for (const until = Date.now() + 10_000; groupAlive(child.pid!) && Date.now() < until;) await sleep(50)
    }
  }
}

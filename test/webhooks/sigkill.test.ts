import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { EventId } from "../../domain/Ids.js"
import { verifyWebhookSignature } from "../../entry/webhooks.js"
import { Outbox } from "../../ports/Outbox.js"
import { describePostgres } from "../support/postgres.js"
import { currentDatabase, databaseUrlOf, DeliveryNode, freshSecretKeys, nodeConfig, seedAccount, seedEvents } from "./node.js"
import { receiver } from "./support.js"

const ROOT = join(import.meta.dirname, "../..")
const SECRET = "whsec_sigkill_test"

/**
 * The host's delivery worker in its own process (fixtures/deliveryWorker.ts: DeliveryWorkerLive over the
 * server's own adapters) on the test database. Resolves once it says READY; SIGKILLed when the scope closes,
 * if still alive.
 */
const startWorker = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<ChildProcess>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/deliveryWorker.ts")], {
          cwd: ROOT,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let output = ""
        const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`no READY within 30 s: ${output}`))), 30_000)
        child.stderr!.on("data", (c) => (output += c))
        child.stdout!.on("data", (c) => {
          output += c
          if (output.includes("READY ")) (clearTimeout(timer), resolve(child))
        })
        child.on("exit", (code) => (clearTimeout(timer), reject(new Error(`worker exited (${code}) before READY: ${output}`))))
      })),
    (child) => Effect.promise(() => kill9(child))
  )

const kill9 = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.on("exit", () => resolve())
    child.kill("SIGKILL")
  })

const until = <E>(what: string, check: () => Effect.Effect<boolean, E>, timeoutMs = 20_000) =>
  Effect.gen(function*() {
    const stopAt = Date.now() + timeoutMs
    while (!(yield* check())) {
      if (Date.now() > stopAt) throw new Error(`timed out waiting for ${what}`)
      yield* Effect.sleep("50 millis")
    }
  })

await describePostgres("SIGKILL of the delivery worker during webhook retries (PostgreSQL)", (database) => {
  it.live("a restart resumes the delivery; it completes exactly once", () =>
    Effect.gen(function*() {
      // Two failures, then one attempt that never gets an answer, then success.
      const hook = yield* receiver((a) => (a.n <= 2 ? 500 : a.n === 3 ? "hang" : 200))
      const keys = freshSecretKeys()
      const db = yield* Layer.build(database)
      const name = yield* currentDatabase.pipe(Effect.provide(db))
      const here = yield* Layer.build(DeliveryNode.pipe(Layer.provide(nodeConfig(keys)), Layer.provide(Layer.succeedContext(db))))
      const account = yield* seedAccount(hook.url, SECRET).pipe(Effect.provide(here))
      const [queued] = yield* seedEvents(account.id, 1, new Date()).pipe(Effect.provide(here))
      const stored = () => Effect.map(Effect.flatMap(Outbox, (o) => o.findById(queued!.id as EventId)), Option.getOrThrow).pipe(Effect.provide(here))
      const env = { DATABASE_URL: databaseUrlOf(name), SECRET_KEYS: keys, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }

      // First worker: two attempts answered 500; killed while it waits to retry.
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const child = yield* startWorker(env)
        yield* until("two recorded attempts", () => Effect.map(stored(), (e) => e.attempts === 2))
        yield* Effect.promise(() => kill9(child))
        return child
      }))
      expect(first.signalCode).toBe("SIGKILL")
      expect(yield* stored()).toMatchObject({ status: "pending", attempts: 2, lastError: "HTTP 500" })
      expect(hook.arrivals).toHaveLength(2)

      // Second worker: resumes at once; killed while its attempt is waiting for the receiver's answer.
      yield* Effect.scoped(Effect.gen(function*() {
        const child = yield* startWorker(env)
        yield* Effect.promise(() => hook.waitFor(3))
        yield* Effect.promise(() => kill9(child))
      }))
      yield* until("the receiver to see the sender gone", () => Effect.sync(() => hook.arrivals[2]!.abandonedAt !== null), 5_000)
      // The cut-off attempt was never recorded; its lease keeps the event from being sent again at once.
      expect(yield* stored()).toMatchObject({ status: "pending", attempts: 2 })

      // Third worker: takes the event once the lease has run out; delivered.
      yield* Effect.scoped(Effect.gen(function*() {
        yield* startWorker(env)
        yield* until("delivery", () => Effect.map(stored(), (e) => e.status === "delivered"), 30_000)
        // Anything sent twice would show up now.
        yield* Effect.sleep("1500 millis")
      }))

      const arrivals = hook.arrivals
      expect(arrivals.map((a) => [a.method, a.eventId, a.answered])).toStrictEqual([
        ["POST", queued!.id, 500],
        ["POST", queued!.id, 500],
        ["POST", queued!.id, null],
        ["POST", queued!.id, 200]
      ])
      expect(arrivals.filter((a) => a.answered !== null && a.answered >= 200 && a.answered < 300)).toHaveLength(1)
      for (const a of arrivals) {
        expect(a.rawBody).toBe(queued!.body)
        expect(verifyWebhookSignature(SECRET, a.headers["x-service-signature"] as string, a.rawBody)).toBe(true)
      }
      expect(arrivals[3]!.arrivedAt - arrivals[2]!.arrivedAt).toBeGreaterThanOrEqual(9_000)
      const done = yield* stored()
      expect(done).toMatchObject({ status: "delivered", attempts: 3, lastError: null })
      expect(done.firstAttemptAt!.getTime()).toBeLessThanOrEqual(arrivals[0]!.arrivedAt)
    }).pipe(Effect.scoped), 120_000)
})

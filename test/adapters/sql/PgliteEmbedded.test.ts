import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { DatabaseLive } from "../../../adapters/sql/DatabaseLive.js"
import { StorageSql } from "../../../adapters/sql/SqlLive.js"
import { AccountId, ListingId, SaleId, TokenDigest } from "../../../domain/Ids.js"
import { AccountStore } from "../../../ports/AccountStore.js"
import { CredentialStore } from "../../../ports/CredentialStore.js"
import { ListingStore } from "../../../ports/ListingStore.js"
import { SaleLedger } from "../../../ports/SaleLedger.js"

interface Written {
  readonly accountId: string
  readonly listingId: string
  readonly revoked: string
  readonly active: string
  readonly saleId: string
}

/** Starts the writer in its own process on `dataDir` and resolves with what it wrote once it says READY. */
const startWriter = (dataDir: string): Promise<{ child: ChildProcess; written: Written }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../../support/embeddedWriter.ts")], {
      // TMPDIR inside the test's directory: the killed writer cannot remove its socket directory itself.
      env: { ...process.env, DATA_DIR: join(dataDir, "data"), TMPDIR: dataDir, DATABASE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stderr!.on("data", (chunk) => (err += chunk))
    child.stdout!.on("data", (chunk) => {
      out += chunk
      const line = out.split("\n").find((l) => l.startsWith("READY "))
      if (line) resolve({ child, written: JSON.parse(line.slice("READY ".length)) as Written })
    })
    child.on("exit", (code) => reject(new Error(`writer exited (${code}) before READY: ${err}`)))
  })

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit")
    child.on("exit", () => resolve())
    child.kill("SIGKILL")
  })

const storageOn = (dataDir: string) =>
  StorageSql.pipe(
    Layer.provide(DatabaseLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", join(dataDir, "data")]]))))
  )

describe("PgliteEmbedded (DatabaseLive without DATABASE_URL)", () => {
  it.live("keeps everything across a SIGKILL, revoked keys stay revoked, and refuses a second process", () =>
    Effect.gen(function*() {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-restart-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const { child, written } = yield* Effect.promise(() => startWriter(dataDir))
      expect(yield* Effect.promise(() => readFile(join(dataDir, "data", "pg", "repomarket.lock"), "utf8"))).toBe(String(child.pid))

      // While the writer lives, its database is not opened a second time.
      const refused = yield* Effect.flip(Effect.scoped(Layer.build(storageOn(dataDir))))
      expect(String((refused as { message?: unknown }).message)).toContain(`in use by process ${child.pid}`)

      yield* Effect.promise(() => killed(child))
      yield* Effect.gen(function*() {
        const account = yield* (yield* AccountStore).findById(AccountId.make(written.accountId))
        expect(Option.isSome(account)).toBe(true)
        const listing = yield* (yield* ListingStore).findById(ListingId.make(written.listingId))
        expect(Option.map(listing, (l) => l.accountId)).toStrictEqual(Option.some(written.accountId))
        const credentials = yield* CredentialStore
        const revoked = Option.getOrThrow(yield* credentials.findApiKey(TokenDigest.make(written.revoked)))
        expect(revoked.revokedAt).toStrictEqual(new Date("2024-03-02T00:00:00.000Z"))
        const active = Option.getOrThrow(yield* credentials.findApiKey(TokenDigest.make(written.active)))
        expect(active.revokedAt).toBeNull()
        const sale = Option.getOrThrow(yield* (yield* SaleLedger).findById(SaleId.make(written.saleId)))
        expect([sale.status, sale.transaction]).toStrictEqual(["settled", "0xfeed"])
      }).pipe(Effect.provide(storageOn(dataDir)))
    }).pipe(Effect.scoped), 120_000)
})

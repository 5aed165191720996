/*
 * The delivery side of one app instance on PostgreSQL, for the multi-instance and restart tests under
 * test/webhooks/ and for bench/webhook-burst.ts: the `Webhooks` use case over StorageSql, a SecretBox keyed by
 * SECRET_KEYS (so every instance opens the same sealed webhook secrets) and the real HTTP webhook sender.
 * Also: seeding an account with a webhook and a burst of `sale.settled` events straight into the outbox.
 */
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { SecretBoxAesGcm } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { webhookSecretAad } from "../../domain/Account.js"
import { type AccountId, type EventId, IdPrefix } from "../../domain/Ids.js"
import { saleSettledBody } from "../../domain/rules/SaleEvent.js"
import { newId } from "../../domain/usecases/Minting.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { WebhookEvent } from "../../domain/WebhookEvent.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Outbox } from "../../ports/Outbox.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { anAccount, aSale } from "../support/fixtures.js"
import { TEST_DATABASE_URL } from "../support/postgres.js"

/** A fresh `SECRET_KEYS` value (one AES-256 key), to share between instances. */
export const freshSecretKeys = (): string => `wh:${randomBytes(32).toString("base64")}`

/** Settings of every instance: the shared key and loopback receivers allowed. */
export const nodeConfig = (secretKeys: string) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
    ["SECRET_KEYS", secretKeys],
    ["WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true"]
  ])))

/** One instance: Webhooks plus the ports it runs on (exposed, for seeding and reading). Needs a SqlClient. */
export const DeliveryNode = Webhooks.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(StorageSql, SecretBoxAesGcm, WebhookSenderHttp))
)

/** Its own pool on the database `name` of the test server (a second instance has its own connections). */
export const poolOn = (name: string, maxConnections = 10) =>
  PgClient.layer({ url: Redacted.make(databaseUrlOf(name)), maxConnections })

/** The test server's URL with another database. */
export const databaseUrlOf = (name: string): string => {
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return url.toString()
}

export const currentDatabase = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ name: string }>`SELECT current_database() AS name`, (rows) => rows[0]!.name))

/** An account whose webhook points at `url`, signed with `secret`. */
export const seedAccount = (url: string, secret: string) =>
  Effect.gen(function*() {
    const box = yield* SecretBox
    const account = anAccount()
    const sealed = yield* box.seal(Redacted.make(secret), webhookSecretAad(account))
    return yield* (yield* AccountStore).insertOrGet(anAccount({ ...account, webhookUrl: url, webhookSecret: sealed }))
  })

/**
 * `n` settled-sale events for the account, enqueued through the Outbox port as Purchases does on settlement
 * (the sales themselves are not written to the ledger: delivery reads only the event and the account).
 * Settled and created at `at`, or, when it is null, at the real time each one is enqueued.
 */
export const seedEvents = (accountId: AccountId, n: number, settledAt: Date | null, concurrency = 16) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    const box = yield* SecretBox
    return yield* Effect.forEach(Array.from({ length: n }), () =>
      Effect.gen(function*() {
        const at = settledAt ?? new Date()
        const id = yield* newId<EventId>(IdPrefix.event).pipe(Effect.provideService(SecretBox, box))
        const sale = aSale({ accountId, status: "settled", transaction: `0x${randomBytes(32).toString("hex")}`, settledAt: at })
        const event = new WebhookEvent({
          id, accountId, saleId: sale.id, body: saleSettledBody(id, sale, at), status: "pending",
          attempts: 0, lastError: null, createdAt: at, firstAttemptAt: null, nextAttemptAt: at
        })
        yield* outbox.enqueue(event)
        return event
      }), { concurrency })
  })

import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { call, PRIVATE_TOKEN, signIn, TestApp } from "../support/app.js"
import { describePostgres } from "../support/postgres.js"

/**
 * Issue 3: after a listing with a known host_pat, a dump of every table holds no plaintext token, API key,
 * session, magic-link token or webhook secret — only digests and ciphertexts.
 */
await describePostgres("secrets at rest (PostgreSQL)", (database) => {
  const storage = StorageSql.pipe(Layer.provide(database))
  it.layer(TestApp({ storage }).pipe(Layer.provideMerge(database)), { timeout: 60_000 })((it) => {
    it.effect("no table holds a plaintext secret", () =>
      Effect.gen(function*() {
        // A magic-link token that is never used stays in its table: capture it from the mail.
        yield* call("POST", "/auth/magic-link", { body: { email: "unused@example.com" } })
        const unusedMail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
        const unusedMagic = decodeURIComponent(/token=([^\s]+)/.exec(unusedMail.text)![1]!)

        const session = yield* signIn("scan@example.com")
        const key = (yield* call("POST", "/my/keys", { token: session })).json.key as string
        const listed = yield* call("POST", "/repos", {
          token: key,
          body: { host_url: "https://github.com/octo-org/secret-sauce", host_pat: PRIVATE_TOKEN, price_usd: "9.00" }
        })
        expect(listed.status).toBe(201)
        const webhook = yield* call("PATCH", "/my/account", {
          token: key,
          // A public IP literal: accepted without a DNS lookup, and nothing is sent to it here.
          body: { webhook_url: "https://1.1.1.1/repomarket" }
        })
        const webhookSecret = webhook.json.webhook_secret as string
        expect(webhookSecret).toMatch(/^whsec_/)

        const sql = yield* SqlClient.SqlClient
        const tables = yield* sql<{ table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
        expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(["listings", "api_keys", "sessions"]))
        let dump = ""
        for (const { table_name } of tables) {
          const rows = yield* sql.unsafe<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`)
          dump += rows.map((r) => r.row).join("\n") + "\n"
        }
        // The dump is real: the listing and the sealed token are in it.
        expect(dump).toContain("secret-sauce")
        expect(dump).toMatch(/v1\.test\.[A-Za-z0-9_-]+\./)
        const secrets = [PRIVATE_TOKEN, key, session, unusedMagic, webhookSecret]
        for (const secret of secrets) expect(dump.includes(secret), `plaintext found in the database`).toBe(false)
      }))
  })
})

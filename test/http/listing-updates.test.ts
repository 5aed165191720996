import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { BASE_WALLET, call, checkoutIdOf, DEFAULT_REPOS, type Reply, signInWithKey, TestApp } from "../support/app.js"
import { expectCurrent, expectProblem, fieldsOf, listed, listRepo, repoPage, storesOf } from "../support/flows.js"
import { browserSignIn, dashboardOf, expectPage, htmlGet } from "../support/pages.js"
import { pgliteTestDatabase } from "../support/pglite.js"
import { describePostgres, type TestDatabase } from "../support/postgres.js"

/**
 * Issue 30, the seller's side: a listing's update window `updates_days` (whole days, 0 to 3650, default 0), set
 * on `POST /repos`, three-state on `PATCH /repos/<owner>/<repo>`, shown on the listing JSON, the inventory, the repo
 * page (JSON and HTML) and the dashboard. Run on memory storage, embedded PGlite and PostgreSQL.
 */

const OWNER = "Window-Org"
const NAMES = ["thirty", "plain", "patched", "relisted", "refused", "untouched", "constrained"] as const
const REPOS: ReadonlyArray<FakeRepo> = [...DEFAULT_REPOS, ...NAMES.map((name) => ({ owner: OWNER, name, description: `The ${name} repo` }))]
const urlOf = (name: (typeof NAMES)[number]) => `https://github.com/${OWNER.toLowerCase()}/${name}`
const slugOf = (name: (typeof NAMES)[number]) => `${OWNER}/${name}`

/** Values `updates_days` refuses everywhere: wrong JSON types, fractions, out of range. */
const REFUSED: ReadonlyArray<unknown> = ["30", "", "0", 1.5, 0.5, -1, -0.5, 3651, 1e21, true, false, [], [30], {}, { days: 30 }]

const patch = (key: string, name: (typeof NAMES)[number], body: Record<string, unknown>) =>
  call("PATCH", `/repos/${OWNER}/${name}`, { token: key, body })

/** A 400 invalid_request that names `updates_days`, once, and no other field. */
const expectRefused = (reply: Reply, value: unknown) => {
  const problem = expectProblem(reply, 400, "invalid_request")
  expect({ value, fields: fieldsOf(reply) }).toEqual({ value, fields: ["updates_days"] })
  expect(problem.detail).toMatch(/^updates_days: must be a whole number of days from 0 to 3650/)
}

const suite = (storage: string, app: Layer.Layer<any, any, never>, sql: boolean) =>
  describe(`updates_days (${storage})`, () => {
    layer(app, { timeout: 120_000 })((it) => {
      it.effect("30 on POST is on the listing JSON, the inventory, the repo page (JSON and HTML) and the dashboard", () =>
        Effect.gen(function*() {
          const email = `thirty-${storage}@example.com`
          const { key } = yield* signInWithKey(email)
          const created = yield* listed({ host_url: urlOf("thirty"), price_usd: "5.00", wallet_base: BASE_WALLET, updates_days: 30 }, key)
          expect(created).toMatchObject({ repo: slugOf("thirty"), selling: true, updates_days: 30 })
          expect((yield* storesOf(key))[slugOf("thirty")].updates_days).toBe(30)
          expect((yield* repoPage(OWNER, "thirty")).json).toMatchObject({ repo: slugOf("thirty"), updates_days: 30 })
          const page = expectPage(yield* htmlGet(`/r/${OWNER}/thirty`), 200)
          expect(page).toContain(`<p id="updates">Updates: 30 days after purchase`)
          const { cookie } = yield* browserSignIn(email)
          expect((yield* dashboardOf(cookie)).text).toContain(`<span class="listing-updates">Updates: 30 days after purchase</span>`)
        }))

      it.effect("without updates_days a listing offers none: 0 everywhere, and the page says so", () =>
        Effect.gen(function*() {
          const { key } = yield* signInWithKey(`plain-${storage}@example.com`)
          const created = yield* listed({ host_url: urlOf("plain"), price_usd: "5.00", wallet_base: BASE_WALLET }, key)
          expect(created.updates_days).toBe(0)
          expect((yield* storesOf(key))[slugOf("plain")].updates_days).toBe(0)
          expect((yield* repoPage(OWNER, "plain")).json.updates_days).toBe(0)
          const page = expectPage(yield* htmlGet(`/r/${OWNER}/plain`), 200)
          expect(page).toContain(`<p id="updates">No updates after purchase.</p>`)
          expect(page).not.toContain("Updates:")
        }))

      it.effect("PATCH: absent keeps, a value sets (0 and 3650 too), null resets to 0; the window alone keeps the checkout", () =>
        Effect.gen(function*() {
          const { key } = yield* signInWithKey(`patched-${storage}@example.com`)
          yield* listed({ host_url: urlOf("patched"), price_usd: "5.00", wallet_base: BASE_WALLET, updates_days: 30 }, key)

          const repriced = yield* patch(key, "patched", { price_usd: "6.00" })
          expect(repriced.status, repriced.text).toBe(200)
          expect(repriced.json).toMatchObject({ price_usd: "6.00", updates_days: 30 })
          const checkoutUrl: string = repriced.json.checkout_url

          for (const [sent, shown] of [[7, 7], [null, 0], [3650, 3650], [0, 0], [1, 1]] as const) {
            const reply = yield* patch(key, "patched", { updates_days: sent })
            expect(reply.status, reply.text).toBe(200)
            expect({ sent, shown: reply.json.updates_days, checkout: reply.json.checkout_url }).toEqual({ sent, shown, checkout: checkoutUrl })
            expect((yield* storesOf(key))[slugOf("patched")]).toMatchObject({ updates_days: shown, price_usd: "6.00", checkout_url: checkoutUrl })
            expect((yield* repoPage(OWNER, "patched")).json).toMatchObject({ updates_days: shown, checkout_url: checkoutUrl })
          }
          yield* expectCurrent(checkoutUrl)
          const page = expectPage(yield* htmlGet(`/r/${OWNER}/patched`), 200)
          expect(page).toContain(`<p id="updates">Updates: 1 day after purchase`)

          // With another term the checkout is rebuilt as before, and the window set in the same request.
          const both = yield* patch(key, "patched", { price_usd: "7.00", updates_days: 14 })
          expect(both.json).toMatchObject({ price_usd: "7.00", updates_days: 14 })
          expect(checkoutIdOf(both.json.checkout_url)).not.toBe(checkoutIdOf(checkoutUrl))
        }))

      it.effect("re-listing one's own repo without updates_days keeps the window; with it, sets it", () =>
        Effect.gen(function*() {
          const { key } = yield* signInWithKey(`relisted-${storage}@example.com`)
          yield* listed({ host_url: urlOf("relisted"), price_usd: "5.00", wallet_base: BASE_WALLET, updates_days: 90 }, key)
          expect((yield* listed({ host_url: urlOf("relisted"), price_usd: "6.00" }, key)).updates_days).toBe(90)
          expect((yield* listed({ host_url: urlOf("relisted"), updates_days: 10 }, key)).updates_days).toBe(10)
          expect((yield* storesOf(key))[slugOf("relisted")]).toMatchObject({ updates_days: 10, price_usd: "6.00" })
        }))

      it.effect("a bad updates_days on POST is 400 naming updates_days, and nothing is listed (null too: a new listing has no window to reset)", () =>
        Effect.gen(function*() {
          const { key } = yield* signInWithKey(`refused-${storage}@example.com`)
          for (const value of [...REFUSED, null]) {
            expectRefused(yield* listRepo({ host_url: urlOf("refused"), price_usd: "5.00", wallet_base: BASE_WALLET, updates_days: value }, key), value)
          }
          expectProblem(yield* repoPage(OWNER, "refused"), 404, "not_found")
          expect(yield* storesOf(key)).toEqual({})
        }))

      it.effect("a bad updates_days on PATCH or a re-listing is 400 naming updates_days and changes nothing", () =>
        Effect.gen(function*() {
          const { key } = yield* signInWithKey(`untouched-${storage}@example.com`)
          yield* listed({ host_url: urlOf("untouched"), price_usd: "5.00", wallet_base: BASE_WALLET, updates_days: 30 }, key)
          const before = (yield* storesOf(key))[slugOf("untouched")]
          for (const value of REFUSED) {
            expectRefused(yield* patch(key, "untouched", { updates_days: value }), value)
            // Sent beside a good term, the good term is not applied either.
            expectRefused(yield* patch(key, "untouched", { price_usd: "9.00", updates_days: value }), value)
            expectRefused(yield* listRepo({ host_url: urlOf("untouched"), price_usd: "9.00", updates_days: value }, key), value)
          }
          const after = (yield* storesOf(key))[slugOf("untouched")]
          expect(after).toEqual(before)
          expect(after.updates_days).toBe(30)
          expect((yield* repoPage(OWNER, "untouched")).json.updates_days).toBe(30)
          yield* expectCurrent(after.checkout_url)
        }))

      if (sql) {
        it.effect("the column refuses a window outside 0..3650 and defaults to 0 (migration 0008)", () =>
          Effect.gen(function*() {
            const { key } = yield* signInWithKey(`constrained-${storage}@example.com`)
            yield* listed({ host_url: urlOf("constrained"), updates_days: 5 }, key)
            const db = yield* SqlClient.SqlClient
            for (const days of [-1, 3651]) {
              const refused = yield* Effect.flip(db`UPDATE listings SET updates_days = ${days} WHERE name = 'constrained'`)
              expect(String(refused.cause)).toContain("listings_updates_days_range")
            }
            const rows = yield* db<{ updates_days: number; fallback: number }>`
              SELECT updates_days, (SELECT column_default::int FROM information_schema.columns
                WHERE table_name = 'listings' AND column_name = 'updates_days') AS fallback
              FROM listings WHERE name = 'constrained'`
            expect(rows).toEqual([{ updates_days: 5, fallback: 0 }])
          }))
      }
    })
  })

suite("memory", TestApp({ repos: REPOS }), false)

const pglite = pgliteTestDatabase()
suite("pglite", TestApp({ repos: REPOS, storage: StorageSql.pipe(Layer.provide(pglite)) }).pipe(Layer.provideMerge(pglite)), true)

await describePostgres("updates_days on PostgreSQL", (database: TestDatabase) => {
  suite("postgres", TestApp({ repos: REPOS, storage: StorageSql.pipe(Layer.provide(database)) }).pipe(Layer.provideMerge(database)), true)
})

/*
 * A SERVER-level restart: the real server (`tsx hosts/node/main.ts`) in a child process, once on the embedded
 * PGlite (DATA_DIR) and once on PostgreSQL (DATABASE_URL, a fresh database), with a loopback fake GitHub and
 * a loopback fake facilitator. Through HTTP only: sign in (the link is read from the server's log), create
 * two API keys and revoke one, list two repos, buy on the test twin with the official v2 client and on the
 * live checkout with the same client. Then SIGKILL the whole process and start a new one on the same data:
 * everything must be there, unchanged, revoked keys stay revoked, and the same payments are not sold twice.
 */
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { BASE_WALLET } from "../support/app.js"
import { type FakeGithubServer, startFakeGithubServer, tarballOf } from "../support/fakeGithubServer.js"
import { describePostgres, TEST_DATABASE_URL } from "../support/postgres.js"
import { untar } from "../support/purchase.js"
import { closedPort, startFakeFacilitator, transactionOf } from "../faults/fakeFacilitator.js"
import { buy, pay, presentAgain, unb64 } from "./buyer.js"
import { request, type ServerProcess, signInFromLog, startServer } from "./serverProcess.js"
import { withStableOffers } from "../support/offers.js"

/** A 402's terms: everything but the Sign-In-With-X challenge's fresh nonce and times, which differ per answer. */
const termsOf = (required: any) => {
  const siwx = required?.extensions?.["sign-in-with-x"]
  if (siwx === undefined) return required
  const { expirationTime: _e, issuedAt: _i, nonce: _n, ...info } = siwx.info
  // Signed offers (issue 30) compare by their claims and the key's header (the same key signs after a restart).
  return withStableOffers({ ...required, extensions: { ...required.extensions, "sign-in-with-x": { ...siwx, info } } })
}

const WIDGET = {
  owner: "Octo-Org",
  name: "Widget",
  description: "A widget library",
  language: "TypeScript",
  files: { "README.md": "# Widget\n\nHello\n", "src/index.ts": "export const widget = 1\n" }
}
const GADGET = { owner: "Octo-Org", name: "Gadget", files: { "README.md": "# Gadget\n" } }

/**
 * TMPDIR of every server this file starts: a killed process cannot clean its temporary files (PGlite's socket
 * directory), and sharing it keeps tsx's transform cache warm after the first start. Removed at the end.
 */
const TMP = await mkdtemp(join(tmpdir(), "repomarket-server-restart-tmp-"))
afterAll(() => rm(TMP, { recursive: true, force: true }))

/** A fixed key ring, so both lives of the server decrypt what the first one wrote. */
const SECRET_KEYS = `restart:${Buffer.alloc(32, 7).toString("base64")}`

const expectStatus = (reply: { status: number; text: string }, status: number) => expect(reply.status, reply.text).toBe(status)

/** What the first life of the server made, to compare the second life against. */
interface Made {
  readonly session: string
  readonly active: { readonly id: string; readonly key: string }
  readonly revoked: { readonly id: string; readonly key: string }
  readonly stores: any
  readonly account: any
  readonly keys: any
  readonly sales: any
  readonly widget: any
  readonly required: { readonly live: any; readonly test: any }
  readonly twin: { readonly signature: string; readonly transaction: string; readonly bytes: Buffer }
  readonly live: { readonly signature: string; readonly transaction: string; readonly bytes: Buffer }
}

const firstLife = (server: ServerProcess) =>
  Effect.gen(function*() {
    const at = server.origin
    const session = yield* signInFromLog(server, "restart-seller@example.com")
    const a = yield* request(at, "POST", "/my/keys", { token: session })
    const b = yield* request(at, "POST", "/my/keys", { token: session })
    expectStatus(a, 201)
    expectStatus(b, 201)
    expectStatus(yield* request(at, "DELETE", `/my/keys/${b.json.id}`, { token: session }), 204)
    expectStatus(yield* request(at, "GET", "/my/sales", { token: b.json.key }), 401)
    const key = a.json.key as string

    const widget = yield* request(at, "POST", "/repos", {
      token: key,
      body: { host_url: "https://github.com/octo-org/widget", price_usd: "0.50", wallet_base: BASE_WALLET }
    })
    expectStatus(widget, 201)
    expect(widget.json).toMatchObject({ repo: "Octo-Org/Widget", selling: true })
    const gadget = yield* request(at, "POST", "/repos", { token: key, body: { host_url: "https://github.com/octo-org/gadget" } })
    expectStatus(gadget, 201)
    expect(gadget.json).toMatchObject({ repo: "Octo-Org/Gadget", selling: false })

    const liveChallenge = yield* request(at, "GET", widget.json.checkout_url)
    const testChallenge = yield* request(at, "GET", widget.json.test_checkout_url)
    expectStatus(liveChallenge, 402)
    expectStatus(testChallenge, 402)

    // The test twin: simulated settlement, a manifest instead of the repo's bytes.
    const twin = yield* buy(widget.json.test_checkout_url)
    expect(twin.receipt).toMatchObject({ success: true, network: "eip155:84532", payer: twin.buyer.address })
    expect(Object.keys(untar(twin.bytes)).some((p) => p.endsWith("MANIFEST.json"))).toBe(true)
    // The live checkout through the fake facilitator: the repo's real archive, fetched from the fake GitHub.
    const live = yield* buy(widget.json.checkout_url)
    expect(live.receipt).toMatchObject({ success: true, network: "eip155:8453", payer: live.buyer.address })
    expect(untar(live.bytes)).toEqual(untar(tarballOf(WIDGET)))
    // The first live 402 cut the commit's archive from GitHub, which is then held (adapters/github/ArchiveCache.ts):
    // the first delivery too is sent in one write with its length and its Repr-Digest, and so is the receipt link's.
    expect(live.res.headers.get("content-length")).toBe(String(live.bytes.length))
    expect(live.res.headers.get("repr-digest")).toBe(`sha-256=:${createHash("sha256").update(live.bytes).digest("base64")}:`)
    const receiptLink = /<([^>]+)>; rel="receipt"/.exec(live.res.headers.get("link") ?? "")![1]!
    const again = yield* Effect.promise(() => fetch(receiptLink))
    const againBytes = Buffer.from(yield* Effect.promise(() => again.arrayBuffer()))
    expect(again.status).toBe(200)
    expect(again.headers.get("content-length")).toBe(String(live.bytes.length))
    expect(againBytes.equals(live.bytes)).toBe(true)

    const sales = yield* request(at, "GET", "/my/sales", { token: key })
    expectStatus(sales, 200)
    expect(sales.json.sales.map((s: any) => [s.livemode, s.transaction])).toEqual([
      [true, live.receipt.transaction],
      [false, twin.receipt.transaction]
    ])
    const stores = yield* request(at, "GET", "/my/stores", { token: key })
    expectStatus(stores, 200)
    expect(stores.json.stores.map((s: any) => [s.repo, s.price_usd, s.wallet_base, s.selling, s.checkout_url]).sort()).toEqual([
      ["Octo-Org/Gadget", null, null, false, gadget.json.checkout_url],
      ["Octo-Org/Widget", "0.50", BASE_WALLET, true, widget.json.checkout_url]
    ])
    const account = yield* request(at, "GET", "/my/account", { token: session })
    const keys = yield* request(at, "GET", "/my/keys", { token: session })
    expect(keys.json.keys.map((k: any) => k.id)).toEqual([a.json.id])
    return {
      session,
      active: { id: a.json.id, key },
      revoked: { id: b.json.id, key: b.json.key },
      stores: stores.json,
      account: account.json,
      keys: keys.json,
      sales: sales.json,
      widget: widget.json,
      required: { live: unb64(liveChallenge.headers.get("payment-required")), test: unb64(testChallenge.headers.get("payment-required")) },
      twin: { signature: twin.signature, transaction: twin.receipt.transaction, bytes: twin.bytes },
      live: { signature: live.signature, transaction: live.receipt.transaction, bytes: live.bytes }
    } satisfies Made
  })

const secondLife = (server: ServerProcess, made: Made, github: FakeGithubServer, settlesOf: (signature: string) => number) =>
  Effect.gen(function*() {
    const at = server.origin
    const key = made.active.key
    // First, GitHub rate-limits and then fails this new process (its cache is cold): a purchase is answered
    // 503 host_unavailable (with Retry-After for the rate limit), is not recorded, and charges nothing.
    for (const state of ["rate_limited", "unavailable"] as const) {
      github.setDown(state)
      const refused = yield* pay(made.widget.test_checkout_url)
      expect(refused.res.status, refused.bytes.toString("utf8")).toBe(503)
      expect(JSON.parse(refused.bytes.toString("utf8"))).toMatchObject({ code: "host_unavailable" })
      expect(refused.res.headers.get("retry-after")).toEqual(state === "rate_limited" ? expect.stringMatching(/^[1-9][0-9]*$/) : null)
    }
    github.setDown(null)

    // The listings, unchanged (same checkout ids, prices, wallets).
    const stores = yield* request(at, "GET", "/my/stores", { token: key })
    expectStatus(stores, 200)
    expect(stores.json).toEqual(made.stores)
    expect(stores.json.stores.find((s: any) => s.repo === "Octo-Org/Widget")).toMatchObject({
      checkout_url: made.widget.checkout_url,
      price_usd: "0.50",
      wallet_base: BASE_WALLET,
      selling: true
    })
    // Its checkouts: the same ids, still a 402 offering the same terms.
    const liveChallenge = yield* request(at, "GET", made.widget.checkout_url)
    const testChallenge = yield* request(at, "GET", made.widget.test_checkout_url)
    expectStatus(liveChallenge, 402)
    expectStatus(testChallenge, 402)
    // The live offers now also name the archive the first life cut and kept on disk (DATA_DIR or not, the GitHub
    // adapter's archives outlive the process): its SHA-256 and size, learnt with no download.
    const liveArchive = { sha256: createHash("sha256").update(made.live.bytes).digest("hex"), size: made.live.bytes.length }
    const liveNow = termsOf(unb64(liveChallenge.headers.get("payment-required")))
    const liveBefore = termsOf(made.required.live)
    for (const offer of liveBefore.extensions["offer-receipt"].info.offers) offer.signature.claims.archive = liveArchive
    expect(liveNow).toEqual(liveBefore)
    expect(termsOf(unb64(testChallenge.headers.get("payment-required")))).toEqual(termsOf(made.required.test))

    // Keys: the active one works, the revoked one stays revoked; the session still works.
    const revoked = yield* request(at, "GET", "/my/sales", { token: made.revoked.key })
    expectStatus(revoked, 401)
    expect(revoked.headers.get("www-authenticate")).toBe("Bearer")
    expectStatus(yield* request(at, "GET", "/my/stores", { token: made.revoked.key }), 401)
    const account = yield* request(at, "GET", "/my/account", { token: made.session })
    expectStatus(account, 200)
    expect(account.json).toEqual(made.account)
    expect((yield* request(at, "GET", "/my/keys", { token: made.session })).json).toEqual(made.keys)

    // The sales: there, settled, the same ids and transactions.
    const sales = yield* request(at, "GET", "/my/sales", { token: key })
    expectStatus(sales, 200)
    expect(sales.json).toEqual(made.sales)

    // The same payments (with their payment-identifier ids) presented to the new process: the buyer's retries
    // get the same goods again, never a second settle or sale.
    const twinAgain = yield* presentAgain(made.widget.test_checkout_url, made.twin.signature)
    expect(twinAgain.res.status).toBe(200)
    expect(unb64(twinAgain.res.headers.get("payment-response"))).toMatchObject({ success: true, transaction: made.twin.transaction })
    expect(untar(twinAgain.bytes)).toEqual(untar(made.twin.bytes))
    const liveAgain = yield* presentAgain(made.widget.checkout_url, made.live.signature)
    expect(liveAgain.res.status).toBe(200)
    expect(unb64(liveAgain.res.headers.get("payment-response"))).toMatchObject({ success: true, transaction: made.live.transaction })
    expect(untar(liveAgain.bytes)).toEqual(untar(made.live.bytes))
    expect(settlesOf(made.live.signature)).toBe(1)
    expect((yield* request(at, "GET", "/my/sales", { token: key })).json).toEqual(made.sales)

    // And it sells again.
    const next = yield* buy(made.widget.test_checkout_url)
    const after = yield* request(at, "GET", "/my/sales", { token: key })
    expect(after.json.sales.map((s: any) => s.transaction)).toEqual([next.receipt.transaction, ...made.sales.sales.map((s: any) => s.transaction)])
  })

/**
 * The whole scenario on one storage: `storage` adds to or overrides the settings below (DATA_DIR is always
 * a temporary directory, so nothing is ever written under the working directory).
 */
const scenario = (storage: Record<string, string>) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-server-restart-"))),
      (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
    )
    const github = yield* Effect.acquireRelease(Effect.promise(() => startFakeGithubServer([WIDGET, GADGET])), (g) => Effect.promise(() => g.close()))
    const facilitator = yield* Effect.acquireRelease(Effect.promise(() => startFakeFacilitator()), (f) => Effect.promise(() => f.close()))
    const port = yield* Effect.promise(() => closedPort())
    const env = {
      TMPDIR: TMP,
      DATA_DIR: join(dir, "data"),
      DATABASE_URL: "",
      BASE_URL: `http://127.0.0.1:${port}`,
      GITHUB_API_URL: github.url,
      SECRET_KEYS,
      X402_FACILITATOR_URL: facilitator.url,
      ...storage
    }
    const settlesOf = (signature: string) => {
      const nonce = unb64(signature).payload.authorization.nonce
      return facilitator.calls.filter((c) => c.path === "/settle" && c.body?.paymentPayload?.payload?.authorization?.nonce === nonce).length
    }

    const first = yield* startServer(env, port)
    const made = yield* firstLife(first)
    expect(settlesOf(made.live.signature)).toBe(1)
    expect(transactionOf({ paymentPayload: unb64(made.live.signature) })).toBe(made.live.transaction)

    yield* Effect.promise(() => first.kill("SIGKILL"))
    expect(first.child.signalCode).toBe("SIGKILL")
    expect(first.alive()).toBe(false)

    const second = yield* startServer(env, port)
    yield* secondLife(second, made, github, settlesOf)

    // A clean stop at the end: the whole group exits on SIGTERM, and the embedded database is closed (its
    // lock released) rather than abandoned.
    yield* Effect.promise(() => second.stop())
    expect(second.child.exitCode).toBe(0)
    expect(second.alive()).toBe(false)
    expect(existsSync(join(env.DATA_DIR, "pg", "repomarket.lock"))).toBe(false)
  }).pipe(Effect.scoped)

describe("server restart on embedded PGlite (DATA_DIR)", () => {
  it.live("after a SIGKILL, a new server on the same DATA_DIR has every listing, key, session and sale", () =>
    scenario({}), 180_000)
})

/** A fresh database on the test server for the child process, dropped (with its connections) afterwards. */
const freshDatabaseUrl = Effect.gen(function*() {
  const name = `repomarket_restart_${randomBytes(6).toString("hex")}`
  const admin = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(TEST_DATABASE_URL), maxConnections: 1 })),
      Effect.orDie
    )
  yield* Effect.acquireRelease(
    admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)),
    () => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).pipe(Effect.ignore)
  )
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return url.toString()
})

await describePostgres("server restart on PostgreSQL (DATABASE_URL)", () => {
  it.live("after a SIGKILL, a new server on the same database has every listing, key, session and sale", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      yield* scenario({ DATABASE_URL: url })
    }).pipe(Effect.scoped), 180_000)
})

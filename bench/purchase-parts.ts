/**
 * What the parts of a live purchase cost in CPU, each beside the cheapest way of doing the same thing, measured
 * in this run (bench/workers.ts measures the whole purchase against Express + @x402/express):
 *
 *   - one PostgreSQL statement: node-postgres alone against the same statement through `@effect/sql-pg`
 *     (a purchase makes five, plus the attempt count: bench/rate-limit.ts);
 *   - recording a sale as pending and marking it settled: the two statements over node-postgres alone against
 *     the SaleLedger adapter (adapters/sql/SaleLedgerSql.ts);
 *   - one facilitator verify: a bare `http.request`, our client (adapters/x402/FacilitatorHttp.ts) and
 *     `@x402/core`'s `HTTPFacilitatorClient` (what `@x402/express` uses), against one loopback answerer that
 *     runs in a child process, so that its CPU is not counted;
 *   - a whole purchase's durable steps written plainly, the floor of a second purchase path outside Effect:
 *     the payment header decoded, the attempt counted (`rate-limiter-flexible` on the pool, our table), the
 *     checkout with its listing read, the payment key looked up, the EIP-712 signature checked (our native
 *     check), verify and settle as bare POSTs, the pending sale inserted, the seller's account read and the
 *     sale marked settled: the statements our adapters send, on node-postgres alone. No HTTP server, no
 *     answer, no id lookup, no failure handling, no spans or logs: a lower bound, not a server.
 *
 * Printed: this process's CPU (user + system) per call, 24 calls in flight, and each row's ratio to the first
 * row of its part. Two rounds, alternated; read the second.
 *
 *   npx tsx bench/purchase-parts.ts [--n 6000]
 */
import { spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { parseArgs } from "node:util"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { HTTPFacilitatorClient } from "@x402/core/http"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { RateLimiterMemory as FlexibleMemory, RateLimiterPostgres } from "rate-limiter-flexible"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { type Eip3009Domain, parseEip3009Payment, transferWithAuthorizationTypes, verifyEip3009Signature } from "../adapters/evm/EvmPayment.js"
import { AccountStoreSql } from "../adapters/sql/AccountStoreSql.js"
import { ListingStoreSql } from "../adapters/sql/ListingStoreSql.js"
import { runMigrations } from "../adapters/sql/Migrations.js"
import { SaleLedgerSql } from "../adapters/sql/SaleLedgerSql.js"
import { saleToRow } from "../adapters/sql/SaleRow.js"
import { withOurDiscovery } from "../codec/BazaarDiscovery.js"
import { makeFacilitatorHttp } from "../adapters/x402/FacilitatorHttp.js"
import { requirementV2 } from "../codec/Wire.js"
import { SaleId } from "../domain/Ids.js"
import { Sale } from "../domain/Sale.js"
import type { PaymentRequirement, SubmittedPayment } from "../ports/PaymentFacilitator.js"
import { AccountStore } from "../ports/AccountStore.js"
import { ListingStore } from "../ports/ListingStore.js"
import { SaleLedger } from "../ports/SaleLedger.js"
import { closedPort } from "../test/faults/fakeFacilitator.js"
import { aCheckout, aListing, anAccount, aSale } from "../test/support/fixtures.js"
import { postgresProblem, postgresTestDatabaseUrl } from "../test/support/postgres.js"
import { BENCH_WALLET, fmt, runMain, section, startWatchdog } from "./support.js"

const { values } = parseArgs({ options: { n: { type: "string", default: "6000" } } })
const n = Number.parseInt(values.n, 10)
if (!(n >= 100)) {
  console.error("--n must be at least 100")
  process.exit(2)
}
startWatchdog(600)
const IN_FLIGHT = 24

/** CPU (µs) of this process per call of `call`, `n` calls with IN_FLIGHT in flight, after a warm-up. */
const cpuPerCall = async ({ call, prepare }: Row, offset: number): Promise<number> => {
  prepare?.(offset - 300, n + 300)
  for (let i = 0; i < 300; i++) await call(offset - 300 + i)
  const before = process.cpuUsage()
  let next = 0
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < n) await call(offset + next++)
  }))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / n
}

interface Row {
  readonly label: string
  readonly call: (i: number) => Promise<unknown>
  /** Work for calls `from` .. `from + count - 1` done before the clock starts. */
  readonly prepare?: (from: number, count: number) => void
}

/** Each part's rows, measured in turn; a second round repeats them (the first pays for JIT warm-up). */
const measure = async (part: string, rows: ReadonlyArray<Row>, round: number) => {
  const results: Array<number> = []
  for (const [k, row] of rows.entries()) results.push(await cpuPerCall(row, (round * rows.length + k + 1) * (n + 1000)))
  for (const [k, row] of rows.entries()) {
    console.log(`  ${part.padEnd(22)} ${row.label.padEnd(40)} ${fmt(results[k]!).padStart(5)} µs CPU per call   ${fmt(results[k]! / results[0]!, 2)}x`)
  }
}

/** Answers every POST as a facilitator that says yes would, from a process of its own. */
const ANSWERER = `
const http = require("node:http")
const verify = JSON.stringify({ isValid: true, payer: "0x${"11".repeat(20)}" })
http.createServer((req, res) => {
  req.resume()
  req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(verify) }).end(verify))
}).listen(Number(process.argv[1]), "127.0.0.1", () => console.log("ready"))
`

const requirement: PaymentRequirement = {
  chain: "base",
  livemode: true,
  scheme: "exact",
  network: "eip155:8453",
  v1Network: "base",
  asset: BENCH_WALLET,
  amount: 500_000n as PaymentRequirement["amount"],
  payTo: `0x${"22".repeat(20)}`,
  maxTimeoutSeconds: 300,
  resource: "http://127.0.0.1/checkout/chk_bench",
  description: "bench/small: the repository's default branch as a .tar.gz",
  extra: { name: "USD Coin", version: "2" }
}
const paymentPayload = {
  x402Version: 2,
  resource: { url: requirement.resource, description: requirement.description, mimeType: "application/gzip" },
  accepted: requirementV2(requirement),
  payload: {
    signature: `0x${"33".repeat(65)}`,
    authorization: { from: `0x${"11".repeat(20)}`, to: requirement.payTo, value: "500000", validAfter: "0", validBefore: "9999999999", nonce: `0x${"44".repeat(32)}` }
  }
}
const payment: SubmittedPayment = {
  x402Version: 2,
  scheme: "exact",
  network: requirement.network,
  accepted: Option.none(),
  payload: paymentPayload.payload,
  raw: paymentPayload
} as unknown as SubmittedPayment

const facilitatorRows = async (url: string): Promise<ReadonlyArray<Row>> => {
  const { facilitator } = await Effect.runPromise(makeFacilitatorHttp(url))
  const reference = new HTTPFacilitatorClient({ url })
  // The same bytes as our client sends: with our checkout's `bazaar` declaration in the payload.
  const body = JSON.stringify({
    x402Version: 2,
    paymentPayload: withOurDiscovery(paymentPayload, { url: requirement.resource, description: requirement.description }),
    paymentRequirements: requirementV2(requirement)
  })
  const agent = new Agent({ keepAlive: true })
  const target = new URL(`${url}/verify`)
  const bare = () =>
    new Promise((resolve, reject) => {
      const req = request(target, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
      })
      req.on("error", reject)
      req.end(body)
    })
  return [
    { label: "bare http.request (the floor)", call: bare },
    { label: "ours: FacilitatorHttp.verify", call: () => Effect.runPromise(facilitator.verify(payment, requirement)) },
    { label: "@x402/core HTTPFacilitatorClient.verify", call: () => reference.verify(paymentPayload as never, requirementV2(requirement) as never) }
  ]
}

/**
 * A purchase's durable steps on node-postgres alone, against a seeded account, listing and checkout (our
 * adapters write them). Sale rows are built before the clock starts (a plain path would fill an object
 * literal); 64 payments signed by viem are checked in turn (the check keeps no verdicts).
 */
const plainPurchaseRows = (
  ctx: Context.Context<ListingStore | AccountStore>,
  pool: InstanceType<typeof pg.Pool>,
  facilitatorUrl: string,
  saleOf: (i: number) => Sale,
  settledOf: (sale: Sale) => Sale,
  insert: string,
  update: string
) =>
  Effect.gen(function*() {
    const account = yield* Context.get(ctx, AccountStore).insertOrGet(anAccount())
    const listing = aListing({ accountId: account.id })
    yield* Effect.orDie(Context.get(ctx, ListingStore).insert(listing))
    yield* Context.get(ctx, ListingStore).insertCheckout(aCheckout(listing))
    const domain: Eip3009Domain = { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: BENCH_WALLET as Hex }
    const headers = yield* Effect.promise(() =>
      Promise.all(Array.from({ length: 64 }, async () => {
        const buyer = privateKeyToAccount(generatePrivateKey())
        const message = { from: buyer.address, to: requirement.payTo as Hex, value: 500_000n, validAfter: 0n, validBefore: 9_999_999_999n, nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex }
        const signature = await buyer.signTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message })
        const payload = { signature, authorization: { ...message, value: "500000", validAfter: "0", validBefore: "9999999999" } }
        return Buffer.from(JSON.stringify({ ...paymentPayload, payload })).toString("base64")
      }))
    )
    const limiter = new RateLimiterPostgres({
      storeClient: pool, storeType: "pool", tableName: "rate_limits", tableCreated: true, keyPrefix: "rl",
      points: 1_000_000_000, duration: 60, inMemoryBlockOnConsumed: 1_000_000_000,
      insuranceLimiter: new FlexibleMemory({ points: 1_000_000_000, duration: 60, keyPrefix: "rl" })
    })
    const agent = new Agent({ keepAlive: true })
    const post = (path: string, body: string) =>
      new Promise((resolve, reject) => {
        const req = request(`${facilitatorUrl}${path}`, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
        })
        req.on("error", reject)
        req.end(body)
      })
    const rows = new Map<number, { readonly pending: Array<unknown>; readonly settled: Array<unknown> }>()
    const prepare = (from: number, count: number) => {
      rows.clear()
      for (let i = from; i < from + count; i++) {
        const sale = saleOf(i + 10_000_000)
        rows.set(i, { pending: Object.values(saleToRow(sale)), settled: Object.values(saleToRow(settledOf(sale))) })
      }
    }
    const checkoutSql = "SELECT c.*, l.* FROM checkouts c LEFT JOIN listings l ON l.id = c.listing_id WHERE c.id = $1"
    const purchase = async (i: number) => {
      const row = rows.get(i)!
      const header = JSON.parse(Buffer.from(headers[i % headers.length]!, "base64").toString("utf8")) as typeof paymentPayload
      await limiter.consume(`bench-plain:${i % 64}`)
      await pool.query(checkoutSql, [listing.checkoutId])
      await pool.query("SELECT * FROM sales WHERE payment_key = $1", [`plain:${i}`])
      const parsed = parseEip3009Payment(header.payload)
      if (parsed._tag !== "Right" || !(await verifyEip3009Signature(parsed.right, domain))) throw new Error("the signature did not check")
      const body = JSON.stringify({ x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted })
      await post("/verify", body)
      await pool.query(insert, row.pending)
      await post("/settle", body)
      await pool.query("SELECT * FROM accounts WHERE id = $1", [account.id])
      await pool.query(update, row.settled)
    }
    return [{ label: "durable steps, node-postgres + http alone", call: purchase, prepare }]
  })

const main = async () => {
  const problem = await postgresProblem()
  if (problem !== undefined) throw new Error(`PostgreSQL is needed: ${problem}`)
  const port = await closedPort()
  const answerer = spawn(process.execPath, ["-e", ANSWERER, String(port)], { stdio: ["ignore", "pipe", "inherit"] })
  try {
    await new Promise<void>((resolve, reject) => {
      answerer.stdout!.once("data", () => resolve())
      answerer.once("exit", () => reject(new Error("the answerer did not start")))
    })
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* postgresTestDatabaseUrl
      const ctx = yield* Layer.build(Layer.provideMerge(
        Layer.mergeAll(SaleLedgerSql, ListingStoreSql, AccountStoreSql),
        PgClient.layer({ url: Redacted.make(url), maxConnections: 10 })
      ))
      yield* Effect.provide(runMigrations, ctx)
      const sql = Context.get(ctx, SqlClient.SqlClient)
      const ledger = Context.get(ctx, SaleLedger)
      const pool = new pg.Pool({ connectionString: url, max: 10 })
      yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
      const statement = "SELECT $1::text AS key, now() AS at"
      const statementRows: ReadonlyArray<Row> = [
        { label: "node-postgres alone", call: (i) => pool.query(statement, [`k${i}`]) },
        { label: "@effect/sql-pg", call: (i) => Effect.runPromise(sql`SELECT ${`k${i}`}::text AS key, now() AS at`) }
      ]
      const saleOf = (i: number) => aSale({ id: SaleId.make(`sale_bench${i}`), paymentKey: `eip155:8453:bench:${i}` })
      const settledOf = (sale: Sale) => new Sale({ ...sale, status: "settled", transaction: "0x01", settledAt: new Date() })
      const columns = Object.keys(saleToRow(saleOf(0)))
      const insert = `INSERT INTO sales (${columns.join(", ")}) VALUES (${columns.map((_, k) => `$${k + 1}`).join(", ")}) ON CONFLICT (payment_key) DO NOTHING RETURNING id`
      const update = `UPDATE sales SET ${columns.slice(1).map((c, k) => `${c} = $${k + 2}`).join(", ")} WHERE id = $1 AND status = 'pending' RETURNING id`
      const ledgerRows: ReadonlyArray<Row> = [
        {
          label: "the two statements, node-postgres alone",
          call: async (i) => {
            const sale = saleOf(i)
            await pool.query(insert, Object.values(saleToRow(sale)))
            await pool.query(update, Object.values(saleToRow(settledOf(sale))))
          }
        },
        {
          label: "SaleLedgerSql recordPending + settle",
          call: (i) =>
            Effect.runPromise(Effect.flatMap(ledger.recordPending(saleOf(i)), ({ sale }) => ledger.settle(settledOf(sale), Option.none())))
        }
      ]
      const verifyRows = yield* Effect.promise(() => facilitatorRows(`http://127.0.0.1:${port}`))
      const plainRows = yield* plainPurchaseRows(ctx, pool, `http://127.0.0.1:${port}`, saleOf, settledOf, insert, update)
      console.log(`Purchase parts: CPU of this process per call, ${n} calls per row, ${IN_FLIGHT} in flight`)
      for (const round of [0, 1]) {
        section(`round ${round + 1}${round === 0 ? " (JIT warm-up: read round 2)" : ""}`)
        yield* Effect.promise(() => measure("PostgreSQL statement", statementRows, round))
        yield* Effect.promise(() => measure("record + settle a sale", ledgerRows, round))
        yield* Effect.promise(() => measure("facilitator verify", verifyRows, round))
        yield* Effect.promise(() => measure("a purchase, plain", plainRows, round))
      }
    })))
  } finally {
    answerer.kill()
  }
}

runMain(main)

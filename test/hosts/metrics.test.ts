/*
 * Prometheus metrics of the Node host (`METRICS_PORT`), through real server processes (`tsx hosts/node/main.ts`):
 *
 * - one process on its embedded database: requests counted by route template (never by path: no checkout id or
 *   repo name appears), method, status and whether the front door or the app answered; a test-twin purchase
 *   counted as one settled sale (its payment presented again adds none); the seller's webhook counted as one
 *   attempt that will be retried and one delivery; a client that leaves mid-body counted as `aborted`; the
 *   public port never answers `/metrics`; the metrics port answers nothing else;
 * - settings that are wrong stop start-up with a message naming them;
 * - `WORKERS=2` on PostgreSQL: the cluster's primary serves the sum over both workers.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { closedPort } from "../faults/fakeFacilitator.js"
import { exitOf, getOnNewConnection, request, signInFromLog, startServer } from "../restart/serverProcess.js"
import { BASE_WALLET } from "../support/app.js"
import { startFakeGithubServer } from "../support/fakeGithubServer.js"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"
import { acceptedOf, b64, signEvm, unb64 } from "../support/purchase.js"
import { startReceiver } from "../webhooks/receiver.js"

const WIDGET = { owner: "Octo-Org", name: "Widget", files: { "README.md": "# Widget\n", "src/index.ts": "export const widget = 1\n" } }
const SECRET_KEYS = `metrics:${Buffer.alloc(32, 7).toString("base64")}`

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
const samplesOf = (text: string): Map<string, number> =>
  new Map(text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((line) => {
    const at = line.lastIndexOf(" ")
    return [line.slice(0, at), Number(line.slice(at + 1))] as const
  }))

const scrape = (metricsPort: number) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) })
    return { status: res.status, contentType: res.headers.get("content-type"), text: await res.text() }
  })

/** A sample's value, 0 when the series does not exist (yet). */
const valueOf = (text: string, series: string) => samplesOf(text).get(series) ?? 0

const requestsSeries = (route: string, method: string, status: number | "aborted", answeredBy: "app" | "front_door") =>
  `repomarket_http_requests_total{route="${route}",method="${method}",status="${status}",answered_by="${answeredBy}"}`

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-metrics-"))),
  (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
)

describe("metrics (METRICS_PORT)", () => {
  it.scopedLive("count requests by route, settled sales and webhook attempts, on a port of their own", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const github = yield* Effect.acquireRelease(Effect.promise(() => startFakeGithubServer([WIDGET])), (g) => Effect.promise(() => g.close()))
      // The seller's webhook fails its first attempt, then takes the retry.
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver((arrival) => (arrival.n === 1 ? 500 : 200))), (r) => Effect.promise(() => r.close()))
      const [port, metricsPort] = yield* Effect.promise(() => Promise.all([closedPort(), closedPort()]))
      const server = yield* startServer({
        TMPDIR: dir,
        DATA_DIR: join(dir, "data"),
        GITHUB_API_URL: github.url,
        SECRET_KEYS,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        METRICS_PORT: String(metricsPort)
      }, port, 120_000)
      const before = yield* scrape(metricsPort)
      expect(before.status).toBe(200)
      expect(before.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
      // Node's own metrics are there from the start; no sale yet.
      expect(before.text).toContain("process_cpu_seconds_total")
      expect(before.text).toContain("nodejs_eventloop_lag_seconds")
      expect(before.text).toContain("# TYPE repomarket_sales_settled_total counter")
      expect(valueOf(before.text, `repomarket_sales_settled_total{livemode="false",chain="base"}`)).toBe(0)

      // A seller with a webhook, a listing, its page twice (the second from the front door), its test twin
      // bought once.
      const session = yield* signInFromLog(server, "metrics-seller@example.com")
      const key = (yield* request(server.origin, "POST", "/my/keys", { token: session })).json.key as string
      expect((yield* request(server.origin, "PATCH", "/my/account", { token: key, body: { webhook_url: receiver.url } })).status).toBe(200)
      const listed = yield* request(server.origin, "POST", "/repos", {
        token: key,
        body: { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET }
      })
      expect(listed.status, listed.text).toBe(201)
      for (let i = 0; i < 2; i++) {
        expect((yield* request(server.origin, "GET", "/r/Octo-Org/Widget", { headers: { accept: "application/json" } })).status).toBe(200)
      }
      const testCheckout = listed.json.test_checkout_url as string
      const checkoutId = testCheckout.split("/").at(-2)!
      const offered = yield* Effect.promise(() => fetch(testCheckout.replace(/^https?:\/\/[^/]+/, server.origin)))
      expect(offered.status).toBe(402)
      const required = unb64(offered.headers.get("payment-required"))
      const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:84532"))
      const checkoutPath = new URL(testCheckout).pathname
      const paid = yield* request(server.origin, "GET", checkoutPath, { headers: { "payment-signature": b64(signature) } })
      expect(paid.status, paid.text).toBe(200)
      // The same payment again is refused (its parts are public): no second sale, no second count.
      const again = yield* request(server.origin, "GET", checkoutPath, { headers: { "payment-signature": b64(signature) } })
      expect(again.status).toBe(402)
      // The public port never serves the metrics.
      expect((yield* request(server.origin, "GET", "/metrics")).status).toBe(404)
      // A client that leaves in the middle of its body: counted as aborted, not as the 200 Node presets.
      yield* Effect.promise(() =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write("POST /repos HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"host_url\":")
            setTimeout(() => {
              socket.destroy()
              resolve()
            }, 200)
          })
          socket.on("error", reject)
        })
      )

      // The event is delivered on the second attempt (about 5 s after the first).
      yield* Effect.promise(() => receiver.waitFor(2, 30_000))
      const attempts = (outcome: string) => `repomarket_webhook_attempts_total{outcome="${outcome}"}`
      const after = yield* Effect.promise(async () => {
        // The attempt is counted once its outcome is recorded, just after the receiver answered.
        for (let i = 0; ; i++) {
          const scraped = await Effect.runPromise(scrape(metricsPort))
          const counted = valueOf(scraped.text, attempts("delivered")) >= 1 && valueOf(scraped.text, requestsSeries("/repos", "POST", "aborted", "app")) >= 1
          if (counted || i === 50) return scraped
          await new Promise((r) => setTimeout(r, 100))
        }
      })
      const delta = (series: string) => valueOf(after.text, series) - valueOf(before.text, series)
      expect(delta(`repomarket_sales_settled_total{livemode="false",chain="base"}`)).toBe(1)
      expect(delta(`repomarket_sales_failed_total{livemode="false",chain="base"}`)).toBe(0)
      expect(delta(attempts("retrying"))).toBe(1)
      expect(delta(attempts("delivered"))).toBe(1)
      expect(delta(attempts("failed"))).toBe(0)
      expect(delta(requestsSeries("/repos", "POST", 201, "app"))).toBe(1)
      expect(delta(requestsSeries("/repos", "POST", "aborted", "app"))).toBe(1)
      expect(delta(requestsSeries("/repos", "POST", 200, "app"))).toBe(0)
      expect(delta(requestsSeries("/r/:owner/:repo", "GET", 200, "app"))).toBe(1)
      expect(delta(requestsSeries("/r/:owner/:repo", "GET", 200, "front_door"))).toBe(1)
      // The 402 of the first fetch came from the front door or the app, depending on what it remembered.
      expect(delta(requestsSeries("/checkout/:id/test", "GET", 402, "app")) + delta(requestsSeries("/checkout/:id/test", "GET", 402, "front_door"))).toBe(2)
      expect(delta(requestsSeries("/checkout/:id/test", "GET", 200, "app"))).toBe(1)
      expect(delta(requestsSeries("other", "GET", 404, "app"))).toBe(1)
      expect(delta(`repomarket_http_request_duration_seconds_count{route="/checkout/:id/test",answered_by="app"}`)).toBeGreaterThanOrEqual(2)
      // Labels come from fixed sets: no id, repo name or payment in any series.
      for (const secretish of [checkoutId, "Octo-Org", "octo-org", "Widget"]) {
        expect([...samplesOf(after.text).keys()].filter((k) => k.startsWith("repomarket_") && k.includes(secretish))).toEqual([])
      }

      // The metrics port answers /metrics only, and only to reading.
      const elsewhere = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/healthz`))
      expect(elsewhere.status).toBe(404)
      const posted = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "POST" }))
      expect(posted.status).toBe(405)
      expect(posted.headers.get("allow")).toBe("GET, HEAD")
      yield* Effect.promise(() => server.stop())
    }), 240_000)

  it.scopedLive("a wrong METRICS_PORT stops start-up with a message naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const port = yield* Effect.promise(() => closedPort())
      const word = yield* exitOf({ TMPDIR: dir, DATA_DIR: join(dir, "a"), PORT: String(port), METRICS_PORT: "metrics" })
      expect(word.code).toBe(1)
      expect(word.output).toContain("METRICS_PORT must be a port number from 1 to 65535, or off")
      const same = yield* exitOf({ TMPDIR: dir, DATA_DIR: join(dir, "b"), PORT: String(port), METRICS_PORT: String(port) })
      expect(same.code).toBe(1)
      expect(same.output).toContain("METRICS_PORT must differ from PORT")
    }), 120_000)
})

await describePostgres("metrics of a cluster (WORKERS=2)", () => {
  it.scopedLive("the primary serves the sum over its workers", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const databaseUrl = yield* postgresTestDatabaseUrl
      const [port, metricsPort] = yield* Effect.promise(() => Promise.all([closedPort(), closedPort()]))
      const server = yield* startServer({
        TMPDIR: dir,
        DATA_DIR: join(dir, "data"),
        DATABASE_URL: databaseUrl,
        SECRET_KEYS,
        WORKERS: "2",
        METRICS_PORT: String(metricsPort)
      }, port, 180_000)
      const healthz = requestsSeries("/healthz", "GET", 200, "app")
      // Both workers listen before the count starts (each answers on its own; the primary alternates).
      yield* Effect.promise(async () => {
        for (let i = 0; i < 8; i++) expect(await getOnNewConnection(`${server.origin}/healthz`)).toBe(200)
      })
      const before = yield* scrape(metricsPort)
      expect(before.status).toBe(200)
      const n = 30
      for (let i = 0; i < n; i++) expect(yield* Effect.promise(() => getOnNewConnection(`${server.origin}/healthz`))).toBe(200)
      const after = yield* scrape(metricsPort)
      // Each worker answered about half; only a sum over both comes to n.
      expect(valueOf(after.text, healthz) - valueOf(before.text, healthz)).toBe(n)
      expect(after.text).toContain("process_cpu_seconds_total")
      // The workers do not serve metrics on the public port.
      expect((yield* request(server.origin, "GET", "/metrics")).status).toBe(404)
      yield* Effect.promise(() => server.stop())
    }), 300_000)
})

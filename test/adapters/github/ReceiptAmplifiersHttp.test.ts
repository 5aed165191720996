/*
 * Issue 39, the fourth audit's receipt amplifiers, reproduced black-box through HTTP with the GitHub adapter over
 * the fake GitHub (msw), which counts the server credential's hourly quota as GitHub does (x-ratelimit-* on every
 * answer, 403 at 0). Before: a free account listed its own private repo, bought it on the test twin, took the
 * listing down (its token destroyed); then 110 GET <receipt>/provenance (no limit at all) and 110 GET <receipt>
 * (429 after 10, but the goods were made — GitHub asked — before the limit was checked, and a repository gone was
 * not remembered) made 220 GitHub calls, quota 200 → 0, and the next buyer of another listing paid and got
 * 503 goods_unavailable. The same anonymously with a deleted public repo once the cache was stale. And the buyer's
 * payment-identifier retry with ?updates=latest was not counted against the purchase's re-download limits.
 *
 * Now: every receipt route is admitted by the sale's limits before GitHub is asked; a provenance is read from the
 * archive the ledger recorded at delivery (its own budget); what GitHub says is gone is remembered for 10 minutes.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET, call } from "../../support/app.js"
import {
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  get,
  local,
  newPaymentId,
  REAL_TIME,
  receiptOf,
  sell,
  signEvm,
  withPaymentId
} from "../../support/purchase.js"
import { callTool } from "../../mcp/doors.js"
import { type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { facilitatorHandlers, GithubPurchaseApp } from "./GithubApp.js"
import { HEAD, serveFakeGithub, tarballBytes } from "./support.js"

const OWN_TOKEN = ["github", "pat", "fake", "own", "0039"].join("_")
/** The attacker's own private repo, listed with its token and taken down after buying it on the test twin. */
const OWN_PRIVATE: GhRepo = {
  owner: "Mallory",
  name: "own-private",
  private: true,
  token: OWN_TOKEN,
  sha: HEAD,
  tree: [{ path: "README.md", type: "blob", size: 9 }],
  readme: { path: "README.md", text: "# Mine\n" },
  tarball: tarballBytes(40_000)
}
/** The attacker's own public repo, listed anonymously, bought on the test twin, then deleted on GitHub. */
const OWN_PUBLIC: GhRepo = { owner: "Mallory", name: "own-public", sha: HEAD, tree: [{ path: "a.txt", type: "blob", size: 1 }], tarball: tarballBytes(30_000) }
/** Somebody else's listing, bought live afterwards by an honest buyer. */
const HONEST: GhRepo = { owner: "Honest-Org", name: "tool", sha: HEAD, description: "a tool", tarball: tarballBytes(50_000) }
/** A public repo sold with updates, for the payment-identifier retry. */
const UPDATED: GhRepo = { owner: "Octo-Org", name: "updated-thing", sha: HEAD, tree: [{ path: "b.txt", type: "blob", size: 1 }], tarball: tarballBytes(20_000) }

const gh = makeFakeGithub([OWN_PRIVATE, OWN_PUBLIC, HONEST, UPDATED])
const { dataDir } = serveFakeGithub(gh, {
  appOnLoopback: true,
  handlers: facilitatorHandlers,
  afterEachTest: () => {
    for (const repo of [OWN_PRIVATE, OWN_PUBLIC, HONEST, UPDATED]) gh.put(repo)
  },
  dirPrefix: "repomarket-amplifiers-"
})

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600
/** What the audit's server had left of its hour when the requests began. */
const LEFT = 200
/** "A handful": what 220 requests of a gone repository may cost GitHub in all. */
const HANDFUL = 3

const listingOf = (repo: GhRepo) => `https://github.com/${repo.owner.toLowerCase()}/${repo.name}`

/** A test-twin purchase of `url` by a new buyer as `client` (the official client's scheme): the response. */
const buyTest = (url: string, client: string, id?: string) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const signed = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:84532"))
    const signature = id === undefined ? signed : withPaymentId(signed, id)
    return { res: yield* get(url, { "payment-signature": b64(signature), "x-forwarded-for": client }), signature }
  })

/** A live purchase of `url` by a new buyer as `client`. */
const buyLive = (url: string, client: string) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))
    return yield* get(url, { "payment-signature": b64(signature), "x-forwarded-for": client })
  })

/** `n` GETs of `url`, each from another address of the attacker's (as a botnet or an IPv6 range would ask): their statuses. */
const hammer = (url: string, n: number, from: number) =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
    Effect.flatMap(get(url, { "x-forwarded-for": `198.51.${100 + ((from + i) >> 8)}.${(from + i) & 255}` }), (res) => Effect.as(bytesOf(res), res.status)))

const count = (statuses: ReadonlyArray<number>) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {})

/** The honest buyer of another listing, after the attack: paid live, gets the whole archive. */
const honestBuyerGetsGoods = Effect.gen(function*() {
  const other = yield* sell(`honest-${Math.random().toString(36).slice(2)}@example.com`, { host_url: listingOf(HONEST), price_usd: "0.75", wallet_base: BASE_WALLET })
  const paid = yield* buyLive(other.live, "203.0.113.99")
  const bytes = yield* bytesOf(paid)
  expect(paid.status, bytes.toString("utf8").slice(0, 300)).toBe(200)
  expect(bytes.equals(Buffer.from(HONEST.tarball!))).toBe(true)
})

describe("one receipt link cannot drain the GitHub quota", () => {
  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect(`a taken-down private listing's receipt: 110 provenance and 110 downloads cost at most ${HANDFUL} GitHub calls; the next buyer of another listing gets goods`, () =>
      Effect.gen(function*() {
        const seller = yield* sell("mallory-private@example.com", { host_url: listingOf(OWN_PRIVATE), host_pat: OWN_TOKEN, price_usd: "0.50", wallet_base: BASE_WALLET })
        const { res: bought } = yield* buyTest(seller.test, "198.51.100.1")
        expect(bought.status).toBe(200)
        yield* bytesOf(bought)
        const receipt = yield* local(receiptOf(bought))
        const down = yield* call("DELETE", "/repos/mallory/own-private", { token: seller.key })
        expect(down.status, down.text).toBe(204)

        gh.setQuota({ limit: 5000, remaining: LEFT, resetEpochSeconds: inAnHour() })
        const before = gh.calls.length
        const provenance = yield* hammer(`${receipt}/provenance`, 110, 0)
        const downloads = yield* hammer(receipt, 110, 1000)
        const spent = gh.calls.slice(before)
        expect(spent.length, `GitHub calls: ${spent.slice(0, 5).map((c) => `${c.status} ${c.url.pathname}`).join(", ")}…`).toBeLessThanOrEqual(HANDFUL)
        expect(gh.quotaRemaining).toBeGreaterThanOrEqual(LEFT - HANDFUL)
        // The provenance is the ledger's: served (the archive the test twin delivered) within its own budget, then 429.
        expect(count(provenance)).toEqual({ 200: 30, 429: 80 })
        // Ten downloads admitted (the repository is gone for the server: 503, the goods still owed), then 429.
        expect(count(downloads)).toEqual({ 503: 10, 429: 100 })

        yield* honestBuyerGetsGoods
      }), 120_000)
  })

  layer(GithubPurchaseApp(dataDir(), {}, { freshMs: 1 }), REAL_TIME)((it) => {
    it.effect(`anonymously: a deleted public repo, its cached answer stale: 110 provenance, 110 downloads and 110 /latest cost at most ${HANDFUL} calls`, () =>
      Effect.gen(function*() {
        const seller = yield* sell("mallory-public@example.com", { host_url: listingOf(OWN_PUBLIC), price_usd: "0.50", wallet_base: BASE_WALLET, updates_days: 30 })
        const { res: bought } = yield* buyTest(seller.test, "198.51.100.2")
        expect(bought.status).toBe(200)
        yield* bytesOf(bought)
        const receipt = yield* local(receiptOf(bought))
        // Deleted on GitHub: every anonymous ask is a 404 from now on.
        gh.put({ ...OWN_PUBLIC, private: true, token: "nobody-holds-this-token" })
        yield* Effect.sleep("5 millis")

        gh.setQuota({ limit: 5000, remaining: LEFT, resetEpochSeconds: inAnHour() })
        const before = gh.calls.length
        const provenance = yield* hammer(`${receipt}/provenance`, 110, 0)
        const downloads = yield* hammer(receipt, 110, 1000)
        const latest = yield* hammer(`${receipt}/latest`, 110, 2000)
        const spent = gh.calls.slice(before)
        expect(spent.length, `GitHub calls: ${spent.slice(0, 5).map((c) => `${c.status} ${c.url.pathname}`).join(", ")}…`).toBeLessThanOrEqual(HANDFUL)
        expect(count(provenance)).toEqual({ 200: 30, 429: 80 })
        expect(count(downloads)).toEqual({ 503: 10, 429: 100 })
        // /latest shares the downloads' budget, already spent.
        expect(count(latest)).toEqual({ 429: 110 })

        yield* honestBuyerGetsGoods
      }), 120_000)
  })
})

describe("the MCP door: redownload goes through the same admission", () => {
  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect(`40 MCP redownload calls of a taken-down private listing's receipt cost at most ${HANDFUL} GitHub calls: 10 admitted (goods owed, 503), then 429`, () =>
      Effect.gen(function*() {
        const seller = yield* sell("mallory-mcp@example.com", { host_url: listingOf(OWN_PRIVATE), host_pat: OWN_TOKEN, price_usd: "0.50", wallet_base: BASE_WALLET })
        const { res: bought } = yield* buyTest(seller.test, "198.51.100.3")
        expect(bought.status).toBe(200)
        yield* bytesOf(bought)
        const receipt = receiptOf(bought)
        expect((yield* call("DELETE", "/repos/mallory/own-private", { token: seller.key })).status).toBe(204)

        gh.setQuota({ limit: 5000, remaining: LEFT, resetEpochSeconds: inAnHour() })
        const before = gh.calls.length
        const answers = yield* Effect.forEach(Array.from({ length: 40 }), () => callTool("redownload", { receipt }))
        expect(gh.calls.length - before).toBeLessThanOrEqual(HANDFUL)
        expect(count(answers.map((a) => a.structuredContent?.status ?? 200))).toEqual({ 503: 10, 429: 30 })
      }), 120_000)
  })
})

describe("update downloads by the payment-identifier retry are counted", () => {
  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("the buyer's retry with ?updates=latest: 10 an hour, then 429 with Retry-After, GitHub not asked; /latest by the receipt is then refused too", () =>
      Effect.gen(function*() {
        const seller = yield* sell("updates-retry@example.com", { host_url: listingOf(UPDATED), price_usd: "0.50", wallet_base: BASE_WALLET, updates_days: 30 })
        const { res: bought, signature } = yield* buyTest(seller.test, "203.0.113.40", newPaymentId())
        expect(bought.status).toBe(200)
        yield* bytesOf(bought)
        const receipt = yield* local(receiptOf(bought))
        const retry = (client: string) =>
          Effect.flatMap(get(`${seller.test}?updates=latest`, { "payment-signature": b64(signature), "x-forwarded-for": client }), (res) =>
            Effect.as(bytesOf(res), { status: res.status, retryAfter: res.headers.get("retry-after") }))

        const admitted = yield* Effect.forEach(Array.from({ length: 10 }), () => retry("203.0.113.40"))
        expect(admitted.map((a) => a.status)).toEqual(Array(10).fill(200))
        const before = gh.calls.length
        const refused = yield* Effect.forEach(Array.from({ length: 5 }, (_, i) => i), (i) => retry(`203.0.113.${41 + i}`))
        expect(refused.map((r) => r.status)).toEqual(Array(5).fill(429))
        for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThan(0)
        expect(gh.calls.length).toBe(before)
        // The same budget as /latest and the receipt link: spent.
        expect(yield* hammer(`${receipt}/latest`, 1, 3000)).toEqual([429])
        expect(yield* hammer(receipt, 1, 3001)).toEqual([429])
      }), 120_000)
  })
})

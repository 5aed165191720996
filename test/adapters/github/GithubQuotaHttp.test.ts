/*
 * The server's GitHub quota, through HTTP with the GitHub adapter over the fake GitHub (msw), which counts the
 * server credential's primary rate limit as GitHub does (x-ratelimit-* on every answer, 403 at 0; `GET
 * /rate_limit` free). Anonymous lookups anybody can trigger (owner pages, their index of public repos) keep
 * off the reserve (20 % of the hourly quota): under it an owner page answers without its index, saying so,
 * and GitHub is not asked; previews of listed repos, listing and purchases still ask it.
 *
 * And a paid purchase whose archive the code host will not give after the settle: a clear 503
 * `goods_unavailable` carrying the receipt link, never a closed socket; the sale stays settled and the
 * receipt delivers once GitHub is back.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpResponse } from "msw"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET } from "../../support/app.js"
import {
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  ClockSkew,
  expectProblemResponse,
  get,
  local,
  onlySale,
  REAL_TIME,
  receiptOf,
  sell,
  signEvm,
  unb64
} from "../../support/purchase.js"
import { makeFakeGithub } from "./FakeGithub.js"
import { facilitatorHandlers, GithubPurchaseApp } from "./GithubApp.js"
import { serveFakeGithub, WIDGET } from "./support.js"

const gh = makeFakeGithub([WIDGET])
const { dataDir } = serveFakeGithub(gh, { appOnLoopback: true, handlers: facilitatorHandlers, dirPrefix: "repomarket-quota-" })

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600
const LIMIT = 5000
/** 20 % of 5 000: what anonymous lookups leave. */
const RESERVE = 1000

/** An owner page as the client `client` asks for it (JSON), behind the trusted proxy. */
const ownerPage = (owner: string, client: string) =>
  Effect.gen(function*() {
    const res = yield* get(`${yield* local(`http://repomarket.test/r/${owner}`)}`, { accept: "application/json", "x-forwarded-for": client })
    const text = (yield* bytesOf(res)).toString("utf8")
    return { status: res.status, text, json: res.status === 200 ? JSON.parse(text) : null }
  })

/** A live purchase of `url` (Base, the official client scheme) by a new buyer, as `client`. */
const buy = (url: string, client: string) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))
    return yield* get(url, { "payment-signature": b64(signature), "x-forwarded-for": client })
  })

const ownerIndexCalls = () => gh.calls.filter((c) => c.url.pathname.startsWith("/users/")).length

describe("the code-host quota's reserve", () => {
  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("eight clients asking for 400 made-up owner names spend nothing below the reserve; a listed repo's preview and a purchase still work", () =>
      Effect.gen(function*() {
        // A server with 300 calls left of 5 000 (below the 1 000 kept): the state the review drained it from.
        gh.setQuota({ limit: LIMIT, remaining: 300, resetEpochSeconds: inAnHour() })
        const seller = yield* sell("quota-seller@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
        const beforeNames = gh.quotaRemaining!

        const answers = yield* Effect.all(
          Array.from({ length: 8 }, (_, c) =>
            Effect.forEach(Array.from({ length: 50 }, (_, i) => `ghost-${c}-${i}-${Math.random().toString(36).slice(2, 8)}`), (name) => ownerPage(name, `198.51.100.${c + 1}`))),
          { concurrency: "unbounded" }
        ).pipe(Effect.map((perClient) => perClient.flat()))

        expect(answers).toHaveLength(400)
        // Every page answers, without its index, and says why.
        expect(answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.text.slice(0, 120)}`)).toEqual([])
        for (const a of answers) {
          expect(a.json).toMatchObject({ inventory: [], indexed: [], indexed_available: false })
          expect(a.json.indexed_note).toContain("quota")
        }
        // Nothing was asked of GitHub for them, and nothing was spent.
        expect(ownerIndexCalls()).toBe(0)
        expect(gh.quotaRemaining).toBe(beforeNames)
        expect(gh.rateLimitChecks).toBeLessThanOrEqual(1)

        // The listed repo's preview still asks GitHub (tree and README), and works.
        const page = yield* get(yield* local("http://repomarket.test/r/octo-org/widget"), { accept: "application/json", "x-forwarded-for": "203.0.113.9" })
        const preview = JSON.parse((yield* bytesOf(page)).toString("utf8"))
        expect(page.status).toBe(200)
        expect(preview).toMatchObject({ preview_available: true, commit: WIDGET.sha })
        // So does a purchase: the archive comes from GitHub, whole.
        const bought = yield* buy(seller.live, "203.0.113.9")
        const goods = yield* bytesOf(bought)
        expect(bought.status, goods.toString("utf8").slice(0, 200)).toBe(200)
        expect(goods.equals(Buffer.from(WIDGET.tarball!))).toBe(true)
        expect(gh.calls.filter((c) => c.url.pathname.includes("/tarball/"))).toHaveLength(1)
        expect(gh.quotaRemaining).toBeLessThan(beforeNames)
        expect(gh.quotaRemaining).toBeGreaterThan(0)

        // The owner page of the listed owner still shows its listing; only the index is left out.
        const listedOwner = yield* ownerPage("octo-org", "203.0.113.9")
        expect(listedOwner.json).toMatchObject({ indexed: [], indexed_available: false })
        expect(listedOwner.json.inventory.map((i: { repo: string }) => i.repo)).toEqual(["Octo-Org/Widget"])
        expect(ownerIndexCalls()).toBe(0)
      }))
  })

  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("above the reserve owner indexes are asked for; they stop exactly where the reserve begins, and come back when GitHub's hour resets", () =>
      Effect.gen(function*() {
        const reset = Math.floor(Date.now() / 1000) + 3
        gh.setQuota({ limit: LIMIT, remaining: RESERVE + 3, resetEpochSeconds: reset })
        const found: Array<number> = []
        // Unknown owners (GitHub answers 404): each is asked once while the quota allows it.
        for (let i = 0; i < 6; i++) {
          const answer = yield* ownerPage(`nobody-${i}`, "198.51.100.77")
          found.push(answer.status)
          if (answer.status === 200) expect(answer.json).toMatchObject({ indexed: [], indexed_available: false })
        }
        expect(found).toEqual([404, 404, 404, 200, 200, 200])
        expect(ownerIndexCalls()).toBe(3)
        expect(gh.quotaRemaining).toBe(RESERVE)
        // Under the reserve a real owner's page, too, answers without its index and asks nothing; the HTML page
        // says so in words.
        expect((yield* ownerPage("octo-org", "198.51.100.77")).json).toMatchObject({ indexed: [], indexed_available: false })
        const html = yield* get(yield* local("http://repomarket.test/r/octo-org"), { accept: "text/html", "x-forwarded-for": "198.51.100.77" })
        const text = (yield* bytesOf(html)).toString("utf8")
        expect(html.status).toBe(200)
        expect(text).toMatch(/id="indexed-note"[^>]*>[^<]*quota/)
        expect(ownerIndexCalls()).toBe(3)

        // GitHub's hour resets: the server learns the new quota (GET /rate_limit, free) and the index comes back.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, reset * 1000 + 100 - Date.now()))))
        gh.setQuota({ limit: LIMIT, remaining: LIMIT, resetEpochSeconds: reset + 3600 })
        const back = yield* ownerPage("octo-org", "198.51.100.77")
        expect(back.json).toMatchObject({ indexed_available: true, indexed_note: null })
        expect(back.json.indexed.map((r: { repo: string }) => r.repo)).toEqual(["Octo-Org/Widget"])
        expect(ownerIndexCalls()).toBe(4)
      }))
  })
})

describe("a paid purchase whose archive the code host will not give after the settle", () => {
  const failures = [
    {
      name: "GitHub answers 502",
      answer: () => HttpResponse.json({ message: "Server Error" }, { status: 502 }),
      retryAfter: "30"
    },
    {
      name: "GitHub's rate limit",
      answer: () =>
        HttpResponse.json(
          { message: "API rate limit exceeded for 203.0.113.7.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" },
          { status: 403, headers: { "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 120) } }
        ),
      retryAfter: /^1[12]\d$/
    }
  ] as const
  for (const [n, failure] of failures.entries()) {
    layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
      it.effect(`${failure.name}: 503 goods_unavailable with the receipt link (body and Link) and the settlement receipt; the sale stays settled; the receipt delivers once GitHub is back`, () =>
        Effect.gen(function*() {
          const seller = yield* sell(`after-settle-${n}@example.com`, { price_usd: "0.75", wallet_base: BASE_WALLET })
          gh.setArchiveFailure(failure.answer)

          const answer = yield* buy(seller.live, "203.0.113.20")
          const problem = yield* expectProblemResponse(answer, 503, "goods_unavailable")
          const receipt = receiptOf(answer)
          expect(problem["receipt"]).toBe(receipt)
          expect(problem.detail).toContain("receipt")
          if (typeof failure.retryAfter === "string") expect(answer.headers.get("retry-after")).toBe(failure.retryAfter)
          else expect(answer.headers.get("retry-after")).toMatch(failure.retryAfter)
          expect(problem["retry_after_seconds"]).toBe(Number(answer.headers.get("retry-after")))
          expect(unb64(answer.headers.get("payment-response"))).toMatchObject({ success: true, network: "eip155:8453" })
          // Charged and recorded: the sale is settled, once.
          expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", livemode: true })

          // GitHub back, but the failed cut is not tried again per request: asked at once, the receipt answers the
          // same 503 with the time left, and GitHub is not asked.
          gh.setArchiveFailure(null)
          const tarballCalls = gh.calls.filter((c) => c.url.pathname.includes("/tarball/")).length
          const soon = yield* get(yield* local(receipt), { "x-forwarded-for": "203.0.113.20" })
          yield* expectProblemResponse(soon, 503, "goods_unavailable")
          const wait = Number(soon.headers.get("retry-after"))
          expect(wait).toBeGreaterThan(0)
          expect(wait).toBeLessThanOrEqual(Number(answer.headers.get("retry-after")))
          expect(gh.calls.filter((c) => c.url.pathname.includes("/tarball/")).length).toBe(tarballCalls)
          // After Retry-After, the receipt link delivers the commit paid for.
          yield* Effect.flatMap(ClockSkew, (c) => c.advance(`${wait} seconds`))
          const again = yield* get(yield* local(receipt), { "x-forwarded-for": "203.0.113.20" })
          const bytes = yield* bytesOf(again)
          expect(again.status, bytes.toString("utf8").slice(0, 200)).toBe(200)
          expect(bytes.equals(Buffer.from(WIDGET.tarball!))).toBe(true)
          expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled" })
        }))
    })
  }
})

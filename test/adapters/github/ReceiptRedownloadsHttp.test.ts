/*
 * Receipt re-downloads, through HTTP with the GitHub adapter over the fake GitHub (msw) and a live
 * facilitator: archives of purchased commits are kept on disk (any size; memory keeps only those up to 2 MiB),
 * so re-downloads do not go back to GitHub; they are limited per receipt (10 an hour) and per client address
 * (30 an hour), and to 2 at once per receipt, each answering 429 with Retry-After; a purchase (the first
 * download) is never refused by those limits.
 */
import { readdirSync } from "node:fs"
import { get as httpGet } from "node:http"
import { join } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET, call } from "../../support/app.js"
import {
  acceptedOf,
  b64,
  bytesOf,
  challenge,
  expectProblemResponse,
  get,
  local,
  REAL_TIME,
  receiptOf,
  sell,
  signEvm
} from "../../support/purchase.js"
import { type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { facilitatorHandlers, GithubPurchaseApp } from "./GithubApp.js"
import { HEAD, PRIVATE_TOKEN, SECRET, serveFakeGithub, tarballBytes } from "./support.js"

/** Over the 2 MiB the memory cache keeps: before this change every re-download of it went back to GitHub. */
const BIG: GhRepo = { owner: "Octo-Org", name: "big-thing", sha: HEAD, description: "big", tarball: tarballBytes(3 * 1024 * 1024) }
/** Big enough that a client that does not read holds its download open (more than the socket buffers take). */
const HUGE: GhRepo = { owner: "Octo-Org", name: "huge-thing", sha: HEAD, description: "huge", tarball: tarballBytes(32 * 1024 * 1024) }
const SECRET_BIG: GhRepo = { ...SECRET, tarball: tarballBytes(3 * 1024 * 1024) }

/** The documented limits (domain/usecases/Redownloads.ts, README): pinned here as the contract. */
const REDOWNLOADS_PER_RECEIPT_PER_HOUR = 10
const REDOWNLOADS_PER_CLIENT_PER_HOUR = 30
const CONCURRENT_DOWNLOADS_PER_RECEIPT = 2
const CONCURRENT_RETRY_AFTER_SECONDS = 15

const gh = makeFakeGithub([BIG, HUGE, SECRET_BIG])
const { dataDir } = serveFakeGithub(gh, { appOnLoopback: true, handlers: facilitatorHandlers, dirPrefix: "repomarket-receipts-" })

const archiveCalls = () => gh.calls.filter((c) => c.url.pathname.includes("/tarball/")).length

const listBig = (email: string, repo: GhRepo = BIG, extra: Record<string, string> = {}) =>
  sell(email, { host_url: `https://github.com/${repo.owner.toLowerCase()}/${repo.name}`, price_usd: "0.75", wallet_base: BASE_WALLET, ...extra })

/** A live purchase of `url` by a new buyer as `client`; answers the response (body unread). */
const buy = (url: string, client: string) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(url)
    const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))
    return yield* get(url, { "payment-signature": b64(signature), "x-forwarded-for": client })
  })

/** Asserts a 200 carrying `repo`'s whole archive. */
const expectArchive = (res: Response, repo: GhRepo) =>
  Effect.gen(function*() {
    const bytes = yield* bytesOf(res)
    expect(res.status, bytes.toString("utf8").slice(0, 200)).toBe(200)
    expect(bytes.equals(Buffer.from(repo.tarball!)), "the whole archive").toBe(true)
  })

/** A re-download by receipt as `client`: the status, and the body read (or the 429 checked). */
const redownload = (receipt: string, client: string, repo: GhRepo = BIG) =>
  Effect.gen(function*() {
    const res = yield* get(yield* local(receipt), { "x-forwarded-for": client })
    if (res.status === 200) yield* expectArchive(res, repo)
    else if (res.status === 429) {
      yield* expectProblemResponse(res, 429, "rate_limited")
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
    } else yield* bytesOf(res)
    return res.status
  })

/**
 * A download whose client reads the status line and headers and then nothing more (its socket's buffers fill
 * and the server is held up); `hangUp` closes its connection.
 */
const stalled = (url: string, client: string) =>
  Effect.async<{ readonly status: number; readonly hangUp: () => void }>((resume) => {
    const request = httpGet(url, { headers: { "x-forwarded-for": client }, agent: false }, (res) => {
      res.pause()
      resume(Effect.succeed({ status: res.statusCode ?? 0, hangUp: () => request.destroy() }))
    })
    request.on("error", () => undefined)
  })

describe("receipt re-downloads", () => {
  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("one receipt link requested 60 times: 10 downloads, then 429 with Retry-After; GitHub sees one archive request in all; the refusals cost the client nothing", () =>
      Effect.gen(function*() {
        const seller = yield* listBig("receipts-60@example.com")
        const bought = yield* buy(seller.live, "203.0.113.60")
        const receipt = receiptOf(bought)
        yield* expectArchive(bought, BIG)
        expect(archiveCalls()).toBe(1)

        const statuses: Array<number> = []
        for (let i = 0; i < 60; i++) statuses.push(yield* redownload(receipt, "203.0.113.60"))
        expect(statuses.slice(0, REDOWNLOADS_PER_RECEIPT_PER_HOUR)).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(200))
        expect(statuses.slice(REDOWNLOADS_PER_RECEIPT_PER_HOUR)).toEqual(Array(60 - REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(429))
        // Every download after the purchase came from the archive kept on disk.
        expect(archiveCalls()).toBe(1)
        // Another address cannot use the receipt past its limit either.
        expect(yield* redownload(receipt, "198.51.100.60")).toBe(429)
        // The 50 refusals were the receipt's: the client has spent 10 of its 30 an hour, and its other purchase
        // re-downloads 10 times more (its own limit), then 429.
        const other = yield* buy(seller.live, "203.0.113.60")
        yield* expectArchive(other, BIG)
        const again: Array<number> = []
        for (let i = 0; i < REDOWNLOADS_PER_RECEIPT_PER_HOUR; i++) again.push(yield* redownload(receiptOf(other), "203.0.113.60"))
        expect(again).toEqual(Array(REDOWNLOADS_PER_RECEIPT_PER_HOUR).fill(200))
      }))
  })

  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("a client at its re-download limit is still sold to: the purchase delivers, only its re-download waits", () =>
      Effect.gen(function*() {
        const seller = yield* listBig("receipts-client@example.com")
        const client = "203.0.113.61"
        const perReceipt = REDOWNLOADS_PER_RECEIPT_PER_HOUR
        const receipts: Array<string> = []
        for (let r = 0; r < REDOWNLOADS_PER_CLIENT_PER_HOUR / perReceipt; r++) {
          const bought = yield* buy(seller.live, client)
          receipts.push(receiptOf(bought))
          yield* expectArchive(bought, BIG)
        }
        for (const receipt of receipts) {
          for (let i = 0; i < perReceipt; i++) expect(yield* redownload(receipt, client)).toBe(200)
        }
        // The client's 30 an hour are spent: a fresh receipt of its own is refused for now...
        const fresh = yield* buy(seller.live, client)
        // ...but the purchase itself, the first download, is never refused by the re-download limits.
        const freshReceipt = receiptOf(fresh)
        yield* expectArchive(fresh, BIG)
        expect(yield* redownload(freshReceipt, client)).toBe(429)
        // The receipt's own budget is not the client's: from another address it downloads.
        expect(yield* redownload(freshReceipt, "198.51.100.61")).toBe(200)
        expect(archiveCalls()).toBe(1)
      }))
  })

  layer(GithubPurchaseApp(dataDir()), REAL_TIME)((it) => {
    it.effect("at most 2 downloads of one receipt run at once: a third is 429 with Retry-After until one ends", () =>
      Effect.gen(function*() {
        const seller = yield* listBig("receipts-concurrent@example.com", HUGE)
        const bought = yield* buy(seller.live, "203.0.113.62")
        const receipt = yield* local(receiptOf(bought))
        yield* expectArchive(bought, HUGE)

        // Two clients start downloading and stop reading.
        const open: Array<() => void> = []
        for (let i = 0; i < CONCURRENT_DOWNLOADS_PER_RECEIPT; i++) {
          const started = yield* stalled(receipt, `198.51.100.${70 + i}`)
          expect(started.status).toBe(200)
          open.push(started.hangUp)
        }
        const third = yield* get(receipt, { "x-forwarded-for": "198.51.100.79" })
        yield* expectProblemResponse(third, 429, "rate_limited")
        expect(third.headers.get("retry-after")).toBe(String(CONCURRENT_RETRY_AFTER_SECONDS))

        // One gives up: its slot comes back once the server has let go of that response.
        open[0]!()
        let status = 0
        for (let tries = 0; tries < 50 && status !== 200; tries++) {
          const res = yield* get(receipt, { "x-forwarded-for": "198.51.100.80" })
          status = res.status
          if (status === 200) yield* expectArchive(res, HUGE)
          else {
            yield* bytesOf(res)
            yield* Effect.sleep("100 millis")
          }
        }
        expect(status).toBe(200)
        open[1]!()
        expect(archiveCalls()).toBe(1)
      }))
  })

  const privateDir = dataDir()
  layer(GithubPurchaseApp(privateDir), REAL_TIME)((it) => {
    it.effect("a private listing taken down: its checkout sells to nobody new; receipts of its settled sales still re-download the kept archive", () =>
      Effect.gen(function*() {
        const seller = yield* listBig("receipts-private@example.com", SECRET_BIG, { host_pat: PRIVATE_TOKEN })
        const bought = yield* buy(seller.live, "203.0.113.63")
        const receipt = receiptOf(bought)
        yield* expectArchive(bought, SECRET_BIG)

        const down = yield* call("DELETE", "/repos/octo-org/secret-sauce", { token: seller.key })
        expect(down.status, down.text).toBe(204)
        // A new buyer gets nothing: the checkout is voided (410), so no new sale can reach the archive.
        yield* expectProblemResponse(yield* get(seller.live, { "x-forwarded-for": "203.0.113.64" }), 410, "checkout_gone")

        // The token is destroyed, so GitHub would refuse; the settled sale's receipt is served from disk.
        expect(yield* redownload(receipt, "203.0.113.63", SECRET_BIG)).toBe(200)
        expect(archiveCalls()).toBe(1)
        // On disk under DATA_DIR/archives, named by a digest (never the repo's name or a token).
        const files = readdirSync(join(privateDir, "archives"))
        expect(files.filter((f) => f.endsWith(".sealed"))).toHaveLength(1)
        expect(files.join(" ")).not.toMatch(/secret|octo|github_pat/i)
      }))
  })
})

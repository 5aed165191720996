/*
 * An unpaid page view never evicts a paid archive, through HTTP (the fourth audit's reproduction, scaled down):
 * the GitHub adapter over the fake GitHub (msw), purchased archives kept on disk within ARCHIVE_CACHE_BYTES = 4 MiB.
 * A buyer's receipt for a taken-down private listing (its token destroyed, so GitHub would refuse it) answers from
 * disk; an anonymous page view and 402 of another, large repository (an attacker's listing) make the server cut
 * that archive; the receipt still answers 200 afterwards, without GitHub. Before, both went into one
 * least-recently-used store and the page view pushed the paid archive out: the receipt answered 503 for good.
 * The paid archive on disk is sealed: the private tarball's text is nowhere in the clear.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET, call } from "../../support/app.js"
import { acceptedOf, b64, bytesOf, challenge, get, local, origin, REAL_TIME, receiptOf, sell, signEvm } from "../../support/purchase.js"
import { type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { facilitatorHandlers, GithubPurchaseApp } from "./GithubApp.js"
import { HEAD, PRIVATE_TOKEN, SECRET, serveFakeGithub, tarballBytes } from "./support.js"

const MiB = 1024 * 1024
const MARKER = "PAID-PRIVATE-CODE-31c9"
/** 3 MiB of a private repository (more than the 2 MiB memory keeps), its text marked throughout. */
const PAID: GhRepo = {
  ...SECRET,
  tarball: (() => {
    const bytes = Buffer.alloc(3 * MiB)
    for (let at = 0; at < bytes.length; at += 1024) bytes.write(MARKER, at, "utf8")
    return new Uint8Array(bytes)
  })()
}
/** The attacker's own public repository, 3 MiB: with the paid one, more than the 4 MiB budget. */
const BAIT: GhRepo = { owner: "Mallory", name: "big-bait", sha: HEAD, description: "bait", tarball: tarballBytes(3 * MiB) }

const gh = makeFakeGithub([PAID, BAIT])
const dataDir = serveFakeGithub(gh, { appOnLoopback: true, handlers: facilitatorHandlers, dirPrefix: "repomarket-keeping-http-" }).dataDir()

const downloadsOf = (repo: GhRepo) => gh.calls.filter((c) => c.url.pathname.startsWith(`/${repo.owner}/${repo.name}/legacy.tar.gz`)).length

/** A receipt link asked for: the status, and the whole archive when 200. */
const redownload = (receipt: string, client: string) =>
  Effect.gen(function*() {
    const res = yield* get(yield* local(receipt), { "x-forwarded-for": client })
    const bytes = yield* bytesOf(res)
    if (res.status === 200) expect(bytes.equals(Buffer.from(PAID.tarball!)), "the whole paid archive").toBe(true)
    return res.status
  })

describe("an unpaid page view never evicts a paid archive", () => {
  layer(GithubPurchaseApp(dataDir, { ARCHIVE_CACHE_BYTES: String(4 * MiB) }), REAL_TIME)((it) => {
    it.effect("a taken-down private listing's receipt answers 200 from disk before and after an anonymous page view and 402 of a large repository", () =>
      Effect.gen(function*() {
        // A buyer pays for the private listing; the seller then takes it down (its token is destroyed).
        const seller = yield* sell("keeping-seller@example.com", {
          host_url: "https://github.com/octo-org/secret-sauce",
          price_usd: "0.75",
          wallet_base: BASE_WALLET,
          host_pat: PRIVATE_TOKEN
        })
        const { required } = yield* challenge(seller.live)
        const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))
        const bought = yield* get(seller.live, { "payment-signature": b64(signature), "x-forwarded-for": "203.0.113.80" })
        expect(bought.status).toBe(200)
        expect((yield* bytesOf(bought)).equals(Buffer.from(PAID.tarball!))).toBe(true)
        const receipt = receiptOf(bought)
        const down = yield* call("DELETE", "/repos/octo-org/secret-sauce", { token: seller.key })
        expect(down.status, down.text).toBe(204)
        expect(yield* redownload(receipt, "203.0.113.80")).toBe(200)
        expect(downloadsOf(PAID)).toBe(1)

        // The attacker lists a large repository of their own and views its page and 402 anonymously: the
        // server cuts its archive (the page names its digest).
        const bait = yield* sell("keeping-bait@example.com", { host_url: "https://github.com/mallory/big-bait", price_usd: "1.00", wallet_base: BASE_WALLET })
        const page = yield* get(`${yield* origin}/r/mallory/big-bait`, { accept: "application/json", "x-forwarded-for": "198.51.100.66" })
        const view = (yield* Effect.promise(() => page.json())) as { readonly archive: { readonly size: number } | null }
        expect(page.status).toBe(200)
        expect(view.archive).toMatchObject({ size: 3 * MiB })
        const offer = yield* get(bait.live, { "x-forwarded-for": "198.51.100.66" })
        yield* bytesOf(offer)
        expect(offer.status).toBe(402)
        expect(downloadsOf(BAIT)).toBe(1)

        // The paid archive is still there: the receipt answers 200, and GitHub is not asked.
        expect(yield* redownload(receipt, "203.0.113.80")).toBe(200)
        expect(downloadsOf(PAID)).toBe(1)

        // Kept sealed: the private code is nowhere on disk in the clear.
        for (const sub of readdirSync(dataDir).filter((d) => d.startsWith("archives"))) {
          for (const file of readdirSync(join(dataDir, sub))) {
            expect(readFileSync(join(dataDir, sub, file)).includes(MARKER), `${sub}/${file}`).toBe(false)
          }
        }
        expect(readdirSync(join(dataDir, "archives")).filter((f) => f.endsWith(".sealed"))).toHaveLength(1)
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_WALLET, call, signIn, signInWithKey, SOLANA_WALLET, TestApp } from "../support/app.js"
import { expectProblem, fieldsOf, GADGET_URL, listed, setHostLogin, WIDGET_URL } from "../support/flows.js"

/** Public IP literals: the default policy refuses private targets, and a literal needs no DNS in tests. */
const HOOK = "https://1.1.1.1/hooks/repomarket"
const OTHER_HOOK = "https://8.8.8.8/hooks/repomarket"

/** BASE_WALLET with the case of one hex letter flipped: still hex, but its EIP-55 checksum fails. */
const BAD_CHECKSUM = BASE_WALLET.replace("fCD6", "FCD6")

describe("PATCH /my/account: storefront_tagline", () => {
  layer(TestApp())((it) => {
    it.effect("140 code points are accepted (emoji count once, not as two UTF-16 units)", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("tagline@example.com")
        const tagline = "🦀".repeat(140)
        expect(tagline.length).toBe(280)
        const patched = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: tagline } })
        expect(patched.status).toBe(200)
        expect(patched.json.storefront_tagline).toBe(tagline)
        expect((yield* call("GET", "/my/account", { token: key })).json.storefront_tagline).toBe(tagline)
      }))

    it.effect("141 code points or a line break are 400 naming storefront_tagline; the saved one stays", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("tagline@example.com")
        // The tagline that must stay: saved here, not by an earlier test.
        yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "🦀".repeat(140) } })
        for (const tagline of ["🦀".repeat(141), "a".repeat(141), "first line\nsecond line", "carriage\rreturn"]) {
          const reply = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: tagline } })
          expectProblem(reply, 400, "invalid_request")
          expect({ tagline, fields: fieldsOf(reply) }).toEqual({ tagline, fields: ["storefront_tagline"] })
        }
        expect((yield* call("GET", "/my/account", { token: key })).json.storefront_tagline).toBe("🦀".repeat(140))
      }))

    it.effect("absent keeps it, a new value replaces it, \"\" clears it", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("tagline@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "🦀".repeat(140) } })
        const kept = yield* call("PATCH", "/my/account", { token: key, body: { wallet_solana: SOLANA_WALLET } })
        expect(kept.json).toMatchObject({ storefront_tagline: "🦀".repeat(140), wallet_solana: SOLANA_WALLET })
        const replaced = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "<b>Widgets</b> & more" } })
        expect(replaced.json).toMatchObject({ storefront_tagline: "<b>Widgets</b> & more", wallet_solana: SOLANA_WALLET })
        const cleared = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "" } })
        expect(cleared.json).toMatchObject({ storefront_tagline: null, wallet_solana: SOLANA_WALLET })
      }))
  })
})

describe("storefront tagline on /r/<owner>", () => {
  layer(TestApp())((it) => {
    it.effect("is shown once exactly one account holds listings under the owner", () =>
      Effect.gen(function*() {
        const before = yield* call("GET", "/r/Octo-Org")
        expect(before.json).toMatchObject({ claimed: false, storefront_tagline: null })

        const a = yield* signInWithKey("maker-a@example.com")
        yield* call("PATCH", "/my/account", { token: a.key, body: { storefront_tagline: "Hand-made widgets" } })
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, a.key)
        // An anonymous listing under the same owner does not make it ambiguous: it ties to no account.
        yield* listed({ host_url: "https://github.com/octo-org/free-thing", price_usd: "1.00", wallet_base: BASE_WALLET })
        const claimed = yield* call("GET", "/r/octo-org")
        expect(claimed.status).toBe(200)
        expect(claimed.json).toMatchObject({ owner: "Octo-Org", claimed: true, storefront_tagline: "Hand-made widgets" })
      }).pipe(Effect.provide(TestApp()))) // an unclaimed page to start from, whatever other tests claimed

    it.effect("is not shown while two accounts hold listings under the owner", () =>
      Effect.gen(function*() {
        const a = yield* signInWithKey("maker-a@example.com")
        yield* call("PATCH", "/my/account", { token: a.key, body: { storefront_tagline: "Hand-made widgets" } })
        yield* listed({ host_url: WIDGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, a.key)
        const b = yield* signInWithKey("maker-b@example.com")
        yield* call("PATCH", "/my/account", { token: b.key, body: { storefront_tagline: "Gadgets by B" } })
        yield* listed({ host_url: GADGET_URL, price_usd: "5.00", wallet_base: BASE_WALLET }, b.key)
        const page = yield* call("GET", "/r/Octo-Org")
        expect(page.json).toMatchObject({ claimed: false, storefront_tagline: null })
        expect(page.text).not.toContain("Hand-made widgets")
        expect(page.text).not.toContain("Gadgets by B")

        // Once B takes its listing down, A is the only one again.
        expect((yield* call("DELETE", "/repos/Octo-Org/Gadget", { token: b.key })).status).toBe(204)
        expect((yield* call("GET", "/r/Octo-Org")).json).toMatchObject({ claimed: true, storefront_tagline: "Hand-made widgets" })
      }).pipe(Effect.provide(TestApp()))) // its own two sellers in its own app

    it.effect("an account whose code-host login is the owner claims the page, listings or not", () =>
      Effect.gen(function*() {
        const c = yield* signIn("octo-org-itself@example.com")
        yield* call("PATCH", "/my/account", { token: c, body: { storefront_tagline: "The official store" } })
        // The code-host connection (GitHub OAuth) is a later issue: record the verified login directly.
        yield* setHostLogin("octo-org-itself@example.com", "Octo-Org")
        expect((yield* call("GET", "/r/Octo-Org")).json).toMatchObject({ claimed: true, storefront_tagline: "The official store" })
      }))
  })
})

describe("PATCH /my/account: webhook_url", () => {
  layer(TestApp())((it) => {
    it.effect("setting it returns a whsec_ secret in that response only", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("hooks@example.com")
        const set = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: HOOK } })
        expect(set.status).toBe(200)
        expect(set.json.webhook_url).toBe(HOOK)
        const secret = set.json.webhook_secret as string
        expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)

        const read = yield* call("GET", "/my/account", { token: key })
        expect(read.json.webhook_url).toBe(HOOK)
        expect("webhook_secret" in read.json).toBe(false)
        expect(read.text).not.toContain(secret)

        const later = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: "hooked" } })
        expect(later.json.webhook_url).toBe(HOOK)
        expect("webhook_secret" in later.json).toBe(false)
        expect(later.text).not.toContain(secret)

        // Each time it is set, a new secret replaces the old one (even for the same URL).
        const again = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: HOOK } })
        expect(again.json.webhook_secret).toMatch(/^whsec_/)
        expect(again.json.webhook_secret).not.toBe(secret)
        const moved = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: OTHER_HOOK } })
        expect(moved.json.webhook_url).toBe(OTHER_HOOK)
        expect([secret, again.json.webhook_secret]).not.toContain(moved.json.webhook_secret)
      }))

    it.effect("\"\" removes it, and no secret is returned", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("hooks@example.com")
        const cleared = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: "" } })
        expect(cleared.status).toBe(200)
        expect(cleared.json.webhook_url).toBeNull()
        expect("webhook_secret" in cleared.json).toBe(false)
        expect((yield* call("GET", "/my/account", { token: key })).json.webhook_url).toBeNull()
      }))

    it.effect("loopback, private and metadata targets are 400 naming webhook_url; the saved one stays", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("hooks@example.com")
        yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: HOOK } })
        for (const url of ["http://127.0.0.1/hook", "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/hook"]) {
          const reply = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: url } })
          expectProblem(reply, 400, "invalid_request")
          expect({ url, fields: fieldsOf(reply) }).toEqual({ url, fields: ["webhook_url"] })
          expect("webhook_secret" in reply.json).toBe(false)
        }
        expect((yield* call("GET", "/my/account", { token: key })).json.webhook_url).toBe(HOOK)
      }))
  })
})

describe("PATCH /my/account: default wallets", () => {
  /** Each test saves the defaults it then checks, rather than relying on the first test having run. */
  const savedDefaults = (key: string) =>
    call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET } })
  layer(TestApp())((it) => {
    it.effect("are validated per chain and stored checksummed", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("wallets@example.com")
        const set = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BASE_WALLET.toLowerCase(), wallet_solana: SOLANA_WALLET } })
        expect(set.status).toBe(200)
        expect(set.json).toMatchObject({ wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
        expect((yield* call("GET", "/my/account", { token: key })).json).toMatchObject({ wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
      }))

    it.effect("a mixed-case Base address with a bad checksum is 400 naming wallet_base; nothing changes", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("wallets@example.com")
        yield* savedDefaults(key)
        expect(BAD_CHECKSUM).not.toBe(BASE_WALLET)
        const reply = yield* call("PATCH", "/my/account", { token: key, body: { wallet_base: BAD_CHECKSUM, storefront_tagline: "not saved" } })
        expectProblem(reply, 400, "invalid_request")
        expect(fieldsOf(reply)).toEqual(["wallet_base"])
        const account = (yield* call("GET", "/my/account", { token: key })).json
        expect(account).toMatchObject({ wallet_base: BASE_WALLET, storefront_tagline: null })
      }))

    it.effect("an invalid Solana address is 400 naming wallet_solana", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("wallets@example.com")
        yield* savedDefaults(key)
        // Base58 but only 31 bytes long.
        const reply = yield* call("PATCH", "/my/account", { token: key, body: { wallet_solana: SOLANA_WALLET.slice(0, -2) } })
        expectProblem(reply, 400, "invalid_request")
        expect(fieldsOf(reply)).toEqual(["wallet_solana"])
        expect((yield* call("GET", "/my/account", { token: key })).json.wallet_solana).toBe(SOLANA_WALLET)
      }))

    it.effect("GET /my/account shows the settings and nothing secret", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("wallets@example.com")
        yield* savedDefaults(key)
        const account = yield* call("GET", "/my/account", { token: key })
        expect(account.json).toEqual({
          email: "wallets@example.com",
          storefront_tagline: null,
          webhook_url: null,
          wallet_base: BASE_WALLET,
          wallet_solana: SOLANA_WALLET,
          host_login: null
        })
      }))
  })
})

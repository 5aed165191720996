import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { Account } from "../../domain/Account.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { call, signInWithKey } from "../support/app.js"
import { expectProblem, fieldsOf } from "../support/flows.js"
import { buyTest, deliverDue, onlyEvent, receiver, salesPage, sellerWithHook, DefaultWebhookApp } from "./support.js"

/** A public address literal: accepted in the default configuration without any DNS lookup. */
const PUBLIC_HOOK = "https://1.1.1.1/hooks/repomarket"

/** Every one of these is (or resolves to) a loopback, private, link-local or metadata address. */
const REFUSED = [
  "http://127.0.0.1/hook",
  "https://127.0.0.1/hook",
  "https://10.0.0.1/hook",
  "https://169.254.169.254/latest/meta-data/",
  "https://[::1]/hook",
  // Host names that resolve privately without any network: /etc/hosts maps both to 127.0.0.1.
  "https://localhost/hook",
  "https://localhost:8443/hook",
  "https://vm/hook",
  // Other spellings and neighbours of the same ranges.
  "https://2130706433/hook",
  "https://0x7f.1/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[::ffff:169.254.169.254]/hook",
  "https://[fe80::1]/hook",
  "https://[fd00::1]/hook",
  "https://192.168.1.10/hook",
  "https://172.16.0.1/hook",
  "https://100.64.0.1/hook",
  "https://0.0.0.0/hook",
  // https only, even to a public address.
  "http://1.1.1.1/hook"
]

const accountOf = (email: string) => Effect.map(Effect.flatMap(AccountStore, (s) => s.findByEmail(email)), Option.getOrThrow)

describe("webhook targets in the default configuration", () => {
  layer(DefaultWebhookApp())((it) => {
    it.effect("PATCH /my/account refuses private, loopback, link-local and metadata targets: 400 naming webhook_url, nothing stored", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("ssrf@example.com")
        const set = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: PUBLIC_HOOK } })
        expect(set.status, set.text).toBe(200)
        const saved = yield* accountOf("ssrf@example.com")
        expect(saved.webhookUrl).toBe(PUBLIC_HOOK)

        for (const url of REFUSED) {
          const reply = yield* call("PATCH", "/my/account", { token: key, body: { webhook_url: url } })
          expectProblem(reply, 400, "invalid_request")
          expect({ url, fields: fieldsOf(reply) }).toStrictEqual({ url, fields: ["webhook_url"] })
          expect(reply.text).not.toContain("whsec_")
        }
        // Neither the URL nor the secret changed.
        const after = yield* accountOf("ssrf@example.com")
        expect([after.webhookUrl, after.webhookSecret]).toStrictEqual([saved.webhookUrl, saved.webhookSecret])

        // An account without a webhook stays without one.
        const fresh = yield* signInWithKey("ssrf-fresh@example.com")
        const refused = yield* call("PATCH", "/my/account", { token: fresh.key, body: { webhook_url: "https://localhost/hook" } })
        expectProblem(refused, 400, "invalid_request")
        const untouched = yield* accountOf("ssrf-fresh@example.com")
        expect([untouched.webhookUrl, untouched.webhookSecret]).toStrictEqual([null, null])
      }))

    it.scoped("at delivery time a stored target that now resolves to loopback is refused; nothing reaches it", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("rebound@example.com", PUBLIC_HOOK, 8)
        yield* buyTest(seller.test)
        const [sale] = (yield* salesPage(seller.key)).sales

        // The URL passed when it was set; its host name resolves to loopback now (localhost stands in for
        // a name re-pointed at 127.0.0.1). Written straight to the store, as the earlier check left it.
        const store = yield* AccountStore
        const account = yield* accountOf("rebound@example.com")
        yield* store.update(new Account({ ...account, webhookUrl: `https://localhost:${hook.port}/hook` }))

        expect(yield* deliverDue).toBe(1)
        const event = yield* onlyEvent(sale!.id)
        expect(event).toMatchObject({
          status: "pending",
          attempts: 1,
          lastError: "refused_target: must not point to a private, loopback, link-local or metadata address"
        })
        expect(hook.connections()).toBe(0)
        expect(hook.arrivals).toHaveLength(0)

        // A stored plain-http loopback URL is refused for its scheme too.
        yield* store.update(new Account({ ...account, webhookUrl: hook.url }))
        yield* TestClock.adjust("1 second")
        expect(yield* deliverDue).toBe(1)
        expect(yield* onlyEvent(sale!.id)).toMatchObject({ status: "pending", attempts: 2, lastError: "refused_target: must use https" })
        expect(hook.connections()).toBe(0)
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({
          status: "pending",
          attempts: 2,
          last_error: "refused_target: must use https"
        })
      }))
  })
})

import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signatureHeader } from "../../adapters/webhook/Signature.js"
// From the package entry, as a receiver would import it.
import { verifyWebhookSignature } from "../../entry/webhooks.js"
import { buyTest, deliverDue, onlyEvent, receiver, salesPage, sellerWithHook, setWebhook, WebhookApp } from "./support.js"
import { signedAt } from "./receiver.js"
import { verifyReceipt } from "../../index.js"
import { call } from "../support/app.js"

const BASE_SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"

describe("sale.settled to a real receiver on loopback", () => {
  layer(WebhookApp())((it) => {
    it.scoped("one signed POST with the decided body; the secret from PATCH /my/account verifies it", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("signed@example.com", hook)
        const { payer, transaction } = yield* buyTest(seller.test)

        // The buyer was served before any delivery: the event waits in the outbox.
        expect(hook.arrivals).toHaveLength(0)
        const [sale] = (yield* salesPage(seller.key)).sales
        expect((yield* onlyEvent(sale!.id)).status).toBe("pending")

        expect(yield* deliverDue).toBe(1)
        expect(hook.arrivals).toHaveLength(1)
        const got = hook.arrivals[0]!
        expect(got.method).toBe("POST")
        expect(got.path).toBe("/hook")
        expect(got.headers["content-type"]).toBe("application/json")
        const header = got.headers["x-service-signature"] as string
        expect(header).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/)

        const body = JSON.parse(got.rawBody)
        expect(body).toStrictEqual({
          id: expect.stringMatching(/^evt_[A-Za-z0-9]{22}$/),
          type: "sale.settled",
          created: expect.any(Number),
          livemode: false,
          data: {
            sale_id: sale!.id,
            repo: "Octo-Org/Widget",
            amount_usd: "0.50",
            amount: "500000",
            asset: BASE_SEPOLIA_USDC,
            network: "eip155:84532",
            payer,
            transaction,
            // What was sold: the commit, the archive when known at settlement (the twin's goods are made per
            // sale, so only its download names theirs) and the signed receipt, verified below.
            commit: "0123456789abcdef0123456789abcdef01234567",
            archive: null,
            receipt: expect.any(String)
          }
        })
        expect(Math.abs(body.created - signedAt(header))).toBeLessThanOrEqual(1)
        const keys = (yield* call("GET", "/.well-known/jwks.json")).json
        // A test sale's receipt: it verifies only as the test purchase it is.
        expect(yield* Effect.promise(() => verifyReceipt(body.data.receipt, keys))).toMatchObject({ valid: false })
        expect(yield* Effect.promise(() => verifyReceipt(body.data.receipt, keys, { allowTest: true }))).toMatchObject({
          valid: true,
          test: "test purchase, simulated money",
          claims: { sale: sale!.id, commit: "0123456789abcdef0123456789abcdef01234567", payer, transaction, amount: "500000", livemode: false, archive: null }
        })

        // The secret from PATCH /my/account verifies the bytes as received, as a string or as bytes.
        expect(verifyWebhookSignature(seller.secret, header, got.rawBody)).toBe(true)
        expect(verifyWebhookSignature(seller.secret, header, new TextEncoder().encode(got.rawBody))).toBe(true)
        // Tampered bodies: one changed digit, the same JSON re-serialised.
        expect(verifyWebhookSignature(seller.secret, header, got.rawBody.replace("\"500000\"", "\"500001\""))).toBe(false)
        expect(verifyWebhookSignature(seller.secret, header, JSON.stringify(body, null, 2))).toBe(false)
        // A wrong secret, and no header at all.
        expect(verifyWebhookSignature(`${seller.secret}x`, header, got.rawBody)).toBe(false)
        expect(verifyWebhookSignature("whsec_not-the-one", header, got.rawBody)).toBe(false)
        expect(verifyWebhookSignature(seller.secret, undefined, got.rawBody)).toBe(false)

        // Old timestamps: the received header read 300 s later still passes, 301 s later it fails.
        const t = signedAt(header)
        expect(verifyWebhookSignature(seller.secret, header, got.rawBody, { now: (t + 300) * 1000 })).toBe(true)
        expect(verifyWebhookSignature(seller.secret, header, got.rawBody, { now: (t + 301) * 1000 })).toBe(false)
        expect(verifyWebhookSignature(seller.secret, header, got.rawBody, { now: (t + 11) * 1000, toleranceSeconds: 10 })).toBe(false)
        // A correctly keyed HMAC over an old `t` is refused for its age alone.
        const replayed = signatureHeader(seller.secret, t - 301, got.rawBody)
        expect(verifyWebhookSignature(seller.secret, replayed, got.rawBody, { now: t * 1000 })).toBe(false)
        expect(verifyWebhookSignature(seller.secret, signatureHeader(seller.secret, t - 299, got.rawBody), got.rawBody, { now: t * 1000 })).toBe(true)

        // Delivered once: later passes send nothing, and the ledger says delivered.
        expect(yield* deliverDue).toBe(0)
        expect(hook.arrivals).toHaveLength(1)
        expect((yield* salesPage(seller.key)).sales[0]!.webhook).toStrictEqual({ status: "delivered", attempts: 1, last_error: null })
      }))

    it.scoped("setting webhook_url again returns a new secret; the old one no longer verifies new deliveries", () =>
      Effect.gen(function*() {
        const hook = yield* receiver()
        const seller = yield* sellerWithHook("rotated@example.com", hook, 1)
        yield* buyTest(seller.test)
        yield* deliverDue
        const first = hook.arrivals[0]!
        expect(verifyWebhookSignature(seller.secret, first.headers["x-service-signature"] as string, first.rawBody)).toBe(true)

        const rotated = yield* setWebhook(seller.key, hook.url)
        expect(rotated).not.toBe(seller.secret)
        yield* buyTest(seller.test)
        expect(yield* deliverDue).toBe(1)
        expect(hook.arrivals).toHaveLength(2)
        const second = hook.arrivals[1]!
        expect(second.eventId).not.toBe(first.eventId)
        const header = second.headers["x-service-signature"] as string
        expect(verifyWebhookSignature(rotated, header, second.rawBody)).toBe(true)
        expect(verifyWebhookSignature(seller.secret, header, second.rawBody)).toBe(false)
      }))
  })
})

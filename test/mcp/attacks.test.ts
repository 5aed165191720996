import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_URL, BASE_WALLET, BASE_WALLET_2, call } from "../support/app.js"
import {
  acceptedOf,
  expectTestGoods,
  get,
  bytesOf,
  local,
  newPaymentId,
  paymentSignature,
  PurchaseApp,
  REAL_TIME,
  salesOf,
  sell,
  type Selling,
  signEvm,
  signEvmByHand,
  withPaymentId
} from "../support/purchase.js"
import { type Answer, type Door, httpDoor, mcpDoor } from "./doors.js"

/*
 * The purchase attacks of test/http (purchase-replay, purchase-refusals, purchase-recovery), run through both
 * doors: every money rule is the use case's, so each door must refuse exactly what the other refuses, with
 * the same reason, and a payment used at one door is no key at the other.
 */

const SEPOLIA = "eip155:84532"
const newBuyer = () => privateKeyToAccount(generatePrivateKey())

interface Shop {
  readonly seller: Selling
  /** The widget's test checkout (0.50) and the gadget's (0.70), as the listings give them (on BASE_URL). */
  readonly widget: string
  readonly gadget: string
}

/** Lists the widget and the gadget once per app (the layer's tests share it). */
const shopOnce = () => {
  let shop: Shop | undefined
  return Effect.gen(function*() {
    if (shop !== undefined) return shop
    const seller = yield* sell("attacks@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
    const gadget = yield* call("POST", "/repos", { token: seller.key, body: { host_url: "https://github.com/octo-org/gadget", price_usd: "0.70", wallet_base: BASE_WALLET } })
    expect(gadget.status, gadget.text).toBe(201)
    shop = { seller, widget: seller.listing.test_checkout_url, gadget: gadget.json.test_checkout_url }
    return shop
  })
}

const expectRefused = (answer: Answer, reason: string, accepts?: ReadonlyArray<unknown>) => {
  expect(answer.kind, answer.everything.slice(0, 400)).toBe("payment_required")
  expect(answer.error).toBe(reason)
  if (accepts !== undefined) expect(answer.accepts).toEqual(accepts)
  expect(answer.everything).not.toMatch(RECEIPT_LINK)
}

/** A receipt link of this server, wherever an answer might carry one. */
const RECEIPT_LINK = new RegExp(`${BASE_URL.replace(/\./g, "\\.")}/downloads/`)

const otherDoor = (door: Door) => (door.name === "http" ? mcpDoor : httpDoor)

for (const door of [httpDoor, mcpDoor]) {
  const shop = shopOnce()
  layer(PurchaseApp(), REAL_TIME)(`paying through ${door.name}`, (it) => {
    it.effect("the official signer's payment buys once; presented again it is payment_already_used, without goods or receipt", () =>
      Effect.gen(function*() {
        const { seller, widget } = yield* shop
        const required = yield* door.offer(widget)
        const signature = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))
        const before = (yield* salesOf(seller.accountId)).length

        const paid = yield* door.pay(widget, signature)
        expect(paid.kind, paid.everything.slice(0, 400)).toBe("goods")
        expect(paid.settlement).toMatchObject({ success: true, network: SEPOLIA })
        expectTestGoods(paid.bytes!)
        // The receipt link serves the same bytes over HTTP, whichever door sold them.
        const again = yield* bytesOf(yield* get(yield* local(paid.receipt!)))
        expect(again.equals(paid.bytes!)).toBe(true)

        expectRefused(yield* door.pay(widget, signature), "payment_already_used")
        expect((yield* salesOf(seller.accountId)).length).toBe(before + 1)
      }))

    it.effect("a payment settled through the other door is no key here either", () =>
      Effect.gen(function*() {
        const { seller, widget } = yield* shop
        const required = yield* door.offer(widget)
        const signature = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))
        const before = (yield* salesOf(seller.accountId)).length
        expect((yield* otherDoor(door).pay(widget, signature)).kind).toBe("goods")
        expectRefused(yield* door.pay(widget, signature), "payment_already_used")
        expect((yield* salesOf(seller.accountId)).length).toBe(before + 1)
      }))

    it.effect("a payment for another listing, amount or payTo, or with a forged signature, is refused with its reason and records nothing", () =>
      Effect.gen(function*() {
        const { gadget, seller, widget } = yield* shop
        const required = yield* door.offer(widget)
        const accepted = acceptedOf(required, SEPOLIA)
        const buyer = newBuyer()
        const before = (yield* salesOf(seller.accountId)).length

        // Signed for the gadget's terms (0.70), presented at the widget's checkout.
        const forGadget = yield* door.offer(gadget)
        expectRefused(yield* door.pay(widget, yield* signEvm(buyer, forGadget, acceptedOf(forGadget, SEPOLIA))), "requirements_mismatch", required.accepts)
        // Claims the offered terms but signed a lower value, or another recipient.
        const underpaid = yield* signEvmByHand(buyer, accepted, { value: 400_000n })
        expectRefused(yield* door.pay(widget, paymentSignature(required, accepted, underpaid)), "invalid_exact_evm_payload_authorization_value_mismatch")
        const diverted = yield* signEvmByHand(buyer, accepted, { to: BASE_WALLET_2 })
        expectRefused(yield* door.pay(widget, paymentSignature(required, accepted, diverted)), "invalid_exact_evm_recipient_mismatch")
        // A genuine payment with one byte of its signature changed.
        const genuine = yield* signEvm(buyer, required, accepted)
        const payload = genuine.payload as { signature: string }
        const flipped = payload.signature.slice(0, 10) + (payload.signature[10] === "0" ? "1" : "0") + payload.signature.slice(11)
        expectRefused(yield* door.pay(widget, { ...genuine, payload: { ...payload, signature: flipped } }), "invalid_exact_evm_signature")

        expect((yield* salesOf(seller.accountId)).length).toBe(before)
      }))

    it.effect("a payment-identifier id recovers its own purchase, and names no other: 409 payment_id_conflict", () =>
      Effect.gen(function*() {
        const { gadget, seller, widget } = yield* shop
        const buyer = newBuyer()
        const id = newPaymentId()
        const required = yield* door.offer(widget)
        const signature = withPaymentId(yield* signEvm(buyer, required, acceptedOf(required, SEPOLIA)), id)
        const before = (yield* salesOf(seller.accountId)).length

        const first = yield* door.pay(widget, signature)
        expect(first.kind).toBe("goods")
        // The same payment with its id, through either door: the same goods again, no second charge.
        const retried = yield* otherDoor(door).pay(widget, signature)
        expect(retried.kind).toBe("goods")
        expect(retried.receipt).toBe(first.receipt)
        // The same payer and id with a payment for the gadget: that id names the widget's purchase.
        const forGadget = yield* door.offer(gadget)
        const conflicting = yield* door.pay(gadget, withPaymentId(yield* signEvm(buyer, forGadget, acceptedOf(forGadget, SEPOLIA)), id))
        expect(conflicting).toMatchObject({ kind: "problem", status: 409, code: "payment_id_conflict" })
        expect(conflicting.everything).not.toMatch(RECEIPT_LINK)
        expect((yield* salesOf(seller.accountId)).length).toBe(before + 1)
      }))

    it.effect("a payment object that is not an x402 payment is 400 invalid_request and changes nothing", () =>
      Effect.gen(function*() {
        const { seller, widget } = yield* shop
        const required = yield* door.offer(widget)
        const genuine = yield* signEvm(newBuyer(), required, acceptedOf(required, SEPOLIA))
        const before = (yield* salesOf(seller.accountId)).length
        for (const junk of [{ ...genuine, x402Version: 3 }, { ...genuine, accepted: undefined }, { ...genuine, payload: "x" }]) {
          const answer = yield* door.pay(widget, junk)
          expect(answer, answer.everything.slice(0, 300)).toMatchObject({ kind: "problem", status: 400, code: "invalid_request" })
        }
        expect((yield* salesOf(seller.accountId)).length).toBe(before)
      }))
  })
}

import { afterAll, afterEach, beforeAll, describe, expect, layer } from "@effect/vitest"
import { generateKeyPairSigner, type Instruction, type KeyPairSigner } from "@solana/kit"
import type { PaymentRequirements } from "@x402/core/types"
import { Effect } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { SOLANA_WALLET } from "../support/app.js"
import {
  acceptedOf,
  challenge,
  expectGoods,
  expectTestGoods,
  paymentSignature,
  payWith,
  PurchaseApp,
  REAL_TIME,
  salesOf,
  type Selling,
  sell,
  unb64
} from "../support/purchase.js"
import { lighthouse, memo, otherProgram, solanaPayload, sourceOf, standardHead } from "../support/solanaByHand.js"

/*
 * The `exact` SVM scheme (x402 specs/schemes/exact/scheme_exact_svm.md, "Facilitator Verification Rules"):
 * 3 to 6 instructions, compute limit, compute price, TransferChecked, then up to three of Lighthouse (the
 * assertions Phantom injects once and Solflare twice; they MUST be allowed) and Memo. Anything else is refused.
 * Each transaction is built by hand, signed by the buyer, and presented to the test twin over HTTP.
 */

const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
const FACILITATOR = "https://facilitator.test"
const FEE_PAYER = "FeePayer11111111111111111111111111111111111"

// The live facilitator (msw): it settles on Solana mainnet with FEE_PAYER and records what it is sent.
const sent: Array<{ readonly path: string; readonly body: any }> = []
const facilitator = setupServer()
beforeAll(() => facilitator.listen({ onUnhandledRequest: "bypass" }))
afterEach(() => {
  facilitator.resetHandlers()
  sent.length = 0
})
afterAll(() => facilitator.close())

interface Offer {
  readonly seller: Selling
  readonly required: any
  readonly accepted: PaymentRequirements
  readonly buyer: KeyPairSigner
  readonly source: string
}

const offer = (email: string, livemode = false) =>
  Effect.gen(function*() {
    const seller = yield* sell(email, { price_usd: "0.25", wallet_solana: SOLANA_WALLET })
    const { required } = yield* challenge(livemode ? seller.live : seller.test)
    const accepted = acceptedOf(required, livemode ? MAINNET : DEVNET)
    const buyer = yield* Effect.promise(() => generateKeyPairSigner())
    return { seller, required, accepted, buyer, source: yield* sourceOf(buyer, accepted) } satisfies Offer
  })

/** The payload of the standard head followed by `tail`. */
const payloadOf = (o: Offer, tail: (o: Offer) => ReadonlyArray<Instruction>) =>
  Effect.flatMap(standardHead(o.buyer, o.accepted), (head) => solanaPayload(o.buyer, o.accepted, [...head, ...tail(o)]))

/** Presents the standard head followed by `tail` to the test twin. */
const present = (o: Offer, tail: (o: Offer) => ReadonlyArray<Instruction>) =>
  Effect.flatMap(payloadOf(o, tail), (payload) => payWith(o.seller.test, paymentSignature(o.required, o.accepted, payload)))

const expectSettled = (o: Offer, res: Response) =>
  Effect.gen(function*() {
    expectTestGoods(yield* expectGoods(res))
    const receipt = unb64(res.headers.get("payment-response"))
    expect(receipt).toMatchObject({ success: true, network: DEVNET, payer: o.buyer.address })
    expect(receipt.transaction).toMatch(/^sim_/)
    const sales = yield* salesOf(o.seller.accountId)
    expect(sales.find((s) => s.payer === o.buyer.address)).toMatchObject({ status: "settled", livemode: false, amount: 250_000n })
  })

/** 402 with fresh requirements naming the scheme's reason, and no receipt. */
const expectRefused = (o: Offer, res: Response, reason: string) =>
  Effect.gen(function*() {
    const body = yield* Effect.promise(() => res.text())
    expect(res.status, body).toBe(402)
    expect(unb64(res.headers.get("payment-required")).error).toBe(reason)
    expect(JSON.parse(body)).toMatchObject({ x402Version: 1, error: reason })
    expect(res.headers.get("payment-response")).toBeNull()
  })

describe("test twin, Solana transactions as wallets send them", () => {
  // One app per case: a repo is listed once, by one account.
  layer(PurchaseApp(), REAL_TIME)("Phantom", (it) => {
    it.effect("accepts and settles a Phantom-like transaction (one Lighthouse instruction after the memo)", () =>
      Effect.gen(function*() {
        const o = yield* offer("phantom@example.com")
        yield* expectSettled(o, yield* present(o, ({ source }) => [memo(), lighthouse(source)]))
      }))
  })

  layer(PurchaseApp(), REAL_TIME)("Solflare", (it) => {
    it.effect("accepts and settles a Solflare-like transaction (two Lighthouse instructions: 6 in all)", () =>
      Effect.gen(function*() {
        const o = yield* offer("solflare@example.com")
        yield* expectSettled(o, yield* present(o, ({ buyer, source }) => [memo(), lighthouse(source, 0), lighthouse(buyer.address, 1)]))
      }))
  })

  layer(PurchaseApp(), REAL_TIME)("order", (it) => {
    it.effect("accepts Lighthouse before the memo, and a transaction of the three required instructions alone", () =>
      Effect.gen(function*() {
        const o = yield* offer("order@example.com")
        yield* expectSettled(o, yield* present(o, ({ source }) => [lighthouse(source), lighthouse(source, 1), memo()]))
        const bare = { ...o, buyer: yield* Effect.promise(() => generateKeyPairSigner()) }
        yield* expectSettled(bare, yield* present(bare, () => []))
      }))
  })

  layer(PurchaseApp(), REAL_TIME)("refusals", (it) => {
    it.effect("refuses an instruction of any other program, naming its position; 7 instructions; a third Lighthouse", () =>
      Effect.gen(function*() {
        const o = yield* offer("refused@example.com")
        yield* expectRefused(o, yield* present(o, ({ source }) => [otherProgram(source)]), "invalid_exact_svm_payload_unknown_fourth_instruction")
        yield* expectRefused(
          o,
          yield* present(o, ({ source }) => [memo(), otherProgram(source)]),
          "invalid_exact_svm_payload_unknown_fifth_instruction"
        )
        yield* expectRefused(
          o,
          yield* present(o, ({ source }) => [memo(), lighthouse(source), otherProgram(source)]),
          "invalid_exact_svm_payload_unknown_sixth_instruction"
        )
        yield* expectRefused(
          o,
          yield* present(o, ({ source }) => [memo(), lighthouse(source), lighthouse(source, 1), memo()]),
          "invalid_exact_svm_payload_transaction_instructions_length"
        )
        // Wallets inject at most two Lighthouse assertions; the sixth slot is the memo's.
        yield* expectRefused(
          o,
          yield* present(o, ({ source }) => [lighthouse(source), lighthouse(source, 1), lighthouse(source, 2)]),
          "invalid_exact_svm_payload_unknown_sixth_instruction"
        )
        // An allowed program may still not touch the fee payer's account.
        yield* expectRefused(
          o,
          yield* present(o, ({ accepted }) => [memo(), lighthouse(String(accepted.extra["feePayer"]))]),
          "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"
        )
        expect(yield* salesOf(o.seller.accountId)).toEqual([])
      }))
  })

  // The live path checks nothing of the layout itself: it reads the payer and the buyer's signature (the
  // payment's identity) and leaves the scheme's rules to the facilitator, so a wallet's transaction gets there.
  layer(PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR, X402_FACILITATOR_TIMEOUT_MS: "1000" } }), REAL_TIME)("live", (it) => {
    it.effect("hands a Solflare-like transaction to the facilitator as the wallet built it, and sells", () =>
      Effect.gen(function*() {
        const record = (path: string, answer: () => Record<string, unknown>) =>
          http.post(`${FACILITATOR}/${path}`, async ({ request }) => {
            const body = await request.json()
            sent.push({ path, body })
            return HttpResponse.json(answer())
          })
        facilitator.use(
          http.get(`${FACILITATOR}/supported`, () =>
            HttpResponse.json({ kinds: [{ x402Version: 2, scheme: "exact", network: MAINNET, extra: { feePayer: FEE_PAYER } }], extensions: [], signers: {} })),
          // Neither answer names the payer: the sale takes it from the transfer's authority.
          record("verify", () => ({ isValid: true })),
          record("settle", () => ({ success: true, transaction: "5".repeat(88), network: MAINNET }))
        )
        const o = yield* offer("live-solflare@example.com", true)
        expect(o.accepted.extra).toEqual({ feePayer: FEE_PAYER })
        const payload = yield* payloadOf(o, ({ buyer, source }) => [memo(), lighthouse(source, 0), lighthouse(buyer.address, 1)])
        const res = yield* payWith(o.seller.live, paymentSignature(o.required, o.accepted, payload))
        yield* expectGoods(res)
        expect(unb64(res.headers.get("payment-response"))).toMatchObject({ success: true, network: MAINNET, payer: o.buyer.address })
        expect(sent.map((c) => c.path)).toEqual(["verify", "settle"])
        for (const { body } of sent) expect(body.paymentPayload.payload).toEqual(payload)
        expect((yield* salesOf(o.seller.accountId))[0]).toMatchObject({ livemode: true, status: "settled", payer: o.buyer.address })
      }))
  })
})

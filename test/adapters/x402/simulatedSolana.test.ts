import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { generateKeyPairSigner } from "@solana/kit"
import { Effect } from "effect"
import { associatedTokenAddress, decodeSolanaPayment, paymentTransfer } from "../../../adapters/solana/SolanaPayment.js"
import { makeFacilitatorSimulated } from "../../../adapters/x402/FacilitatorSimulated.js"
import { SIMULATED_FAUCET_ATOMIC } from "../../../adapters/x402/SimulatedLedger.js"
import { AtomicAmount } from "../../../domain/Money.js"
import type { PaymentRequirement, SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import { lighthouse, memo, solanaPayload, sourceOf, standardHead } from "../../support/solanaByHand.js"
import { PRICE, TOKEN_PROGRAM, flipBase64Byte, paySolana, requirement, solanaRpc, submitted, testSolana, toX402 } from "./simulatedSupport.js"

beforeAll(() => solanaRpc.listen({ onUnhandledRequest: "error" }))
afterAll(() => solanaRpc.close())

const newSigner = Effect.promise(() => generateKeyPairSigner())

const setup = Effect.gen(function*() {
  const sim = yield* makeFacilitatorSimulated
  const buyer = yield* newSigner
  const seller = (yield* newSigner).address
  const req = requirement(testSolana, { payTo: seller, extra: { ...testSolana.extra, ...sim.extra("solana") } })
  return { sim, buyer, seller, req }
})

type Sim = Effect.Effect.Success<typeof makeFacilitatorSimulated>
const reasonOf = (sim: Sim, req: PaymentRequirement, payment: SubmittedPayment) =>
  sim.facilitator.verify(payment, req).pipe(Effect.map((v) => v.invalidReason))

const transactionOf = (payment: SubmittedPayment): string => (payment.payload as { transaction: string }).transaction

describe("FacilitatorSimulated on Solana devnet (official @x402/svm client)", () => {
  it.effect("offers a fee payer and a recent blockhash as requirement extras, nothing on Base", () =>
    Effect.gen(function*() {
      const sim = yield* makeFacilitatorSimulated
      const extra = sim.extra("solana")
      expect(Object.keys(extra).sort()).toEqual(["feePayer", "recentBlockhash"])
      expect(extra["feePayer"]).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
      expect(sim.extra("base")).toEqual({})
    }))

  it.effect("verifies and settles a valid payment, moving simulated balances once", () =>
    Effect.gen(function*() {
      const { buyer, req, seller, sim } = yield* setup
      const payment = yield* paySolana(buyer, req)
      expect(yield* sim.facilitator.verify(payment, req)).toEqual({ valid: true, invalidReason: null, payer: buyer.address })

      const settlement = yield* sim.facilitator.settle(payment, req)
      expect(settlement.success).toBe(true)
      expect(settlement.transaction).toMatch(/^sim_[1-9A-HJ-NP-Za-km-z]{86,88}$/)
      expect(settlement).toMatchObject({ network: testSolana.network, payer: buyer.address, errorReason: null })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC - PRICE)
      expect(sim.ledger.balanceOf(req.network, seller)).toBe(SIMULATED_FAUCET_ATOMIC + PRICE)

      expect(yield* reasonOf(sim, req, payment)).toBe("duplicate_settlement")
      const again = yield* sim.facilitator.settle(payment, req)
      expect(again).toMatchObject({ success: false, transaction: null, errorReason: "duplicate_settlement" })
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC - PRICE)
    }))

  it.effect("builds the transfer the way the checks expect: Token program, ATA to ATA", () =>
    Effect.gen(function*() {
      // Guards the layout assumptions in SolanaPayment against a change in the official client.
      const { buyer, req, seller } = yield* setup
      const payment = yield* paySolana(buyer, req)
      const decoded = decodeSolanaPayment(payment.payload)
      if (decoded._tag === "Left") return expect.fail(decoded.left)
      const transfer = paymentTransfer(decoded.right)
      if (transfer._tag === "Left") return expect.fail(transfer.left)
      expect(decoded.right.feePayer).toBe(req.extra["feePayer"])
      expect(transfer.right.transfer).toMatchObject({
        program: TOKEN_PROGRAM,
        mint: testSolana.asset,
        authority: buyer.address,
        amount: PRICE,
        decimals: 6,
        source: yield* Effect.promise(() => associatedTokenAddress(buyer.address, testSolana.asset, TOKEN_PROGRAM)),
        destination: yield* Effect.promise(() => associatedTokenAddress(seller, testSolana.asset, TOKEN_PROGRAM))
      })
    }))

  it.effect("refuses a tampered buyer signature", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* paySolana(buyer, req)
      // Wire layout: [signature count][fee payer's 64 bytes][buyer's 64 bytes][message]; byte 70 is the buyer's.
      const tampered = { ...payment, payload: { transaction: flipBase64Byte(transactionOf(payment), 70) } }
      expect(yield* reasonOf(sim, req, tampered)).toBe("invalid_exact_svm_payload_signature_invalid")
      // The byte before the (empty) lookup-table count is the memo's last: the message itself changes.
      const tamperedMessage = { ...payment, payload: { transaction: flipBase64Byte(transactionOf(payment), -2) } }
      expect(yield* reasonOf(sim, req, tamperedMessage)).toBe("invalid_exact_svm_payload_signature_invalid")
      expect(yield* reasonOf(sim, req, payment)).toBeNull()
    }))

  it.effect("refuses a transfer to another owner's token account", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* paySolana(buyer, { ...req, payTo: (yield* newSigner).address })
      expect(yield* reasonOf(sim, req, payment)).toBe("invalid_exact_svm_payload_recipient_mismatch")
      expect((yield* sim.facilitator.settle(payment, req)).errorReason).toBe("invalid_exact_svm_payload_recipient_mismatch")
      expect(sim.ledger.balanceOf(req.network, buyer.address)).toBe(SIMULATED_FAUCET_ATOMIC)
    }))

  it.effect("refuses a transfer of another amount", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* paySolana(buyer, { ...req, amount: AtomicAmount.make(PRICE + 1n) })
      expect(yield* reasonOf(sim, req, payment)).toBe("invalid_exact_svm_payload_amount_mismatch")
    }))

  it.effect("refuses a transaction whose fee payer is not the facilitator's", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const otherFeePayer = (yield* newSigner).address
      const payment = yield* paySolana(buyer, { ...req, extra: { ...req.extra, feePayer: otherFeePayer } })
      expect(yield* reasonOf(sim, req, payment)).toBe("invalid_exact_svm_fee_payer_mismatch")
      const foreign = { ...req, extra: { ...req.extra, feePayer: otherFeePayer } }
      expect(yield* reasonOf(sim, foreign, payment)).toBe("invalid_exact_svm_fee_payer_not_managed_by_facilitator")
    }))

  it.effect("refuses a payment made on another network, and a transaction that is not one", () =>
    Effect.gen(function*() {
      const { buyer, req, sim } = yield* setup
      const payment = yield* paySolana(buyer, req)
      const live = { ...payment, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" }
      expect(yield* reasonOf(sim, req, live)).toBe("invalid_exact_svm_network_mismatch")
      const garbage = { ...payment, payload: { transaction: "not base64 at all!" } }
      expect(yield* reasonOf(sim, req, garbage)).toBe("invalid_exact_svm_payload_transaction_could_not_be_decoded")
    }))

  it.effect("with a seller's extra.memo, takes exactly that one memo beside Lighthouse, and nothing else", () =>
    Effect.gen(function*() {
      const { buyer, req: plain, sim } = yield* setup
      const req = { ...plain, extra: { ...plain.extra, memo: "inv_42" } }
      const accepted = toX402(req)
      const source = yield* sourceOf(buyer, accepted)
      const pay = (tail: ReadonlyArray<ReturnType<typeof memo>>) =>
        Effect.flatMap(standardHead(buyer, accepted), (head) =>
          Effect.map(solanaPayload(buyer, accepted, [...head, ...tail]), (payload) => submitted(req, payload)))
      expect(yield* reasonOf(sim, req, yield* pay([memo("inv_42"), lighthouse(source)]))).toBeNull()
      expect(yield* reasonOf(sim, req, yield* pay([memo("inv_43")]))).toBe("invalid_exact_svm_payload_memo_mismatch")
      expect(yield* reasonOf(sim, req, yield* pay([lighthouse(source)]))).toBe("invalid_exact_svm_payload_memo_count")
      expect(yield* reasonOf(sim, req, yield* pay([memo("inv_42"), memo("inv_42")]))).toBe("invalid_exact_svm_payload_memo_count")
      // Without extra.memo any memo (the client's random nonce) will do.
      expect(yield* reasonOf(sim, plain, yield* pay([memo("anything"), lighthouse(source)]))).toBeNull()
    }))
})

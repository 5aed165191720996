import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { generateKeyPairSigner, getBase58Decoder, getBase64Encoder } from "@solana/kit"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { makeFacilitatorSimulated } from "../../adapters/x402/FacilitatorSimulated.js"
import { Chains, InvalidPayment } from "../../ports/Chains.js"
import { flipBase64Byte, payEvm, paySolana, requirement, solanaRpc, testBase, testSolana } from "./x402/simulatedSupport.js"

beforeAll(() => solanaRpc.listen({ onUnhandledRequest: "error" }))
afterAll(() => solanaRpc.close())

const seller = privateKeyToAccount(generatePrivateKey()).address
const baseReq = requirement(testBase, { payTo: seller })

const identity = (chain: "base" | "solana", payload: unknown) =>
  Effect.flatMap(Chains, (chains) => chains.paymentIdentity(chain, payload))

describe("Chains.paymentIdentity on Base (EIP-3009)", () => {
  it.effect("is eip3009:<from>:<nonce>, lower-cased, with the checksummed payer, and stable", () =>
    Effect.gen(function*() {
      const buyer = privateKeyToAccount(generatePrivateKey())
      const { payload } = yield* payEvm(buyer, baseReq)
      const { authorization } = payload as { authorization: { nonce: string; validBefore: string } }
      const id = yield* identity("base", payload)
      expect(id).toEqual({
        key: `eip3009:${buyer.address.toLowerCase()}:${authorization.nonce.toLowerCase()}`,
        payer: buyer.address,
        settleBy: new Date(Number(authorization.validBefore) * 1000)
      })
      // The same payment sent again, even re-serialised or with upper-case hex, is the same payment.
      const copy = JSON.parse(JSON.stringify(payload)) as { authorization: Record<string, string> }
      copy.authorization["from"] = buyer.address.toUpperCase().replace("0X", "0x")
      copy.authorization["nonce"] = `0x${authorization.nonce.slice(2).toUpperCase()}`
      expect(yield* identity("base", copy)).toEqual(id)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("differs between two payments of one buyer", () =>
    Effect.gen(function*() {
      const buyer = privateKeyToAccount(generatePrivateKey())
      const first = yield* identity("base", (yield* payEvm(buyer, baseReq)).payload)
      const second = yield* identity("base", (yield* payEvm(buyer, baseReq)).payload)
      expect(first.key).not.toBe(second.key)
      expect(first.payer).toBe(second.payer)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("fails with InvalidPayment, never a defect, on malformed payloads", () =>
    Effect.gen(function*() {
      const buyer = privateKeyToAccount(generatePrivateKey())
      const { payload } = yield* payEvm(buyer, baseReq)
      const auth = (payload as { authorization: Record<string, string> }).authorization
      const bad: ReadonlyArray<unknown> = [
        undefined,
        null,
        "0x",
        { transaction: "AAAA" },
        { ...(payload as object), authorization: { ...auth, nonce: "0x1234" } },
        { ...(payload as object), authorization: { ...auth, from: "not an address" } },
        { ...(payload as object), signature: 42 }
      ]
      for (const p of bad) {
        expect(yield* Effect.flip(identity("base", p))).toBeInstanceOf(InvalidPayment)
      }
    }).pipe(Effect.provide(ChainsLive)))
})

describe("Chains.paymentIdentity on Solana", () => {
  const setup = Effect.gen(function*() {
    const sim = yield* makeFacilitatorSimulated
    const buyer = yield* Effect.promise(() => generateKeyPairSigner())
    const payTo = (yield* Effect.promise(() => generateKeyPairSigner())).address
    const req = requirement(testSolana, { payTo, extra: sim.extra("solana") })
    return { buyer, req }
  })

  it.effect("is solana:<the buyer's signature>, with the buyer as payer, and stable", () =>
    Effect.gen(function*() {
      const { buyer, req } = yield* setup
      const { payload } = yield* paySolana(buyer, req)
      const wire = getBase64Encoder().encode((payload as { transaction: string }).transaction)
      // Wire layout: [count = 2][fee payer's empty slot][buyer's signature]...
      const buyerSignature = getBase58Decoder().decode(wire.slice(65, 129))
      const id = yield* identity("solana", payload)
      expect(id).toEqual({ key: `solana:${buyerSignature}`, payer: buyer.address, settleBy: null })
      expect(yield* identity("solana", { transaction: (payload as { transaction: string }).transaction })).toEqual(id)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("differs between two payments of one buyer", () =>
    Effect.gen(function*() {
      const { buyer, req } = yield* setup
      const first = yield* identity("solana", (yield* paySolana(buyer, req)).payload)
      const second = yield* identity("solana", (yield* paySolana(buyer, req)).payload)
      expect(first.key).not.toBe(second.key)
      expect(first.payer).toBe(second.payer)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("fails with InvalidPayment on garbage and on a transaction the buyer has not signed", () =>
    Effect.gen(function*() {
      const { buyer, req } = yield* setup
      const { transaction } = (yield* paySolana(buyer, req)).payload as { transaction: string }
      const unsigned = getBase64Encoder().encode(transaction).slice()
      unsigned.fill(0, 65, 129) // an all-zero signature slot is an absent signature
      const bad: ReadonlyArray<unknown> = [
        null,
        {},
        { transaction: "" },
        { transaction: "%%%" },
        { transaction: transaction.slice(0, 40) },
        { transaction: flipBase64Byte(transaction, -1) }, // claims an address lookup table
        { transaction: Buffer.from(unsigned).toString("base64") }
      ]
      for (const p of bad) {
        expect(yield* Effect.flip(identity("solana", p))).toBeInstanceOf(InvalidPayment)
      }
    }).pipe(Effect.provide(ChainsLive)))
})

/*
 * checkSolana, the local check every Solana purchase runs (and the only check on the payment-identifier retry,
 * which asks no facilitator): each forgery below is the standard payment with one thing wrong, so that it
 * passes every other rule and only the rule named can refuse it.
 */
import { describe, expect, it } from "@effect/vitest"
import { AccountRole, generateKeyPairSigner, signBytes } from "@solana/kit"
import { Effect } from "effect"
import { checkSolana, SvmReason, verifyEd25519 } from "../../../adapters/solana/SolanaCheck.js"
import { associatedTokenAddress } from "../../../adapters/solana/SolanaPayment.js"
import { fromWireBytes, memo, messageBytesOf, signWith, tokenInstruction, wireBytes, withSignature } from "../../support/solanaByHand.js"
import { newSigner, payTransfer, payWith, PRICE, TOKEN, TOKEN_2022, trade, type Trade, USDC } from "./solanaSupport.js"

const check = (payload: unknown, t: Trade, terms: Partial<Trade["terms"]> = {}) =>
  Effect.promise(() => checkSolana(payload, { ...t.terms, ...terms }))

const ata = (owner: string, mint: string, program: string) => Effect.promise(() => associatedTokenAddress(owner, mint, program))

describe("checkSolana accepts the payment the terms ask for", () => {
  it.effect("a Token TransferChecked of exactly the amount of the mint into payTo's ATA, signed by its authority", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t), t)).toBeUndefined()
      // With a memo after it, as the official client adds one.
      expect(yield* check(yield* payWith(t, yield* tokenInstruction(t.buyer, t.accepted), memo()), t)).toBeUndefined()
    }))

  it.effect("a Token-2022 TransferChecked into payTo's Token-2022 ATA (as @x402/svm accepts it)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t, { program: TOKEN_2022 }), t)).toBeUndefined()
    }))

  it.effect("any fee payer when the terms name none", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t), t, { extra: {} })).toBeUndefined()
    }))
})

describe("checkSolana refuses what is not the payment", () => {
  it.effect("an ApproveChecked (13) is not a payment: it lets the destination spend later, it moves nothing", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t, { discriminator: 13 }), t)).toEqual({ reason: SvmReason.noTransfer, payer: null })
    }))

  it.effect("a Transfer (3), unchecked and without the mint, is not a payment", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const data = Uint8Array.from([3, ...Buffer.from(new BigUint64Array([PRICE]).buffer)])
      expect(yield* check(yield* payTransfer(t, { data }), t)).toEqual({ reason: SvmReason.noTransfer, payer: null })
      expect(yield* check(yield* payTransfer(t, { discriminator: 3 }), t)).toEqual({ reason: SvmReason.noTransfer, payer: null })
    }))

  it.effect("a look-alike program's TransferChecked is not a payment (the look-alike would move nothing of USDC)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const forger = (yield* newSigner).address
      for (const program of ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DB", forger]) {
        // Its destination the ATA the terms ask for, so only the program is wrong.
        const destination = yield* ata(t.payTo, USDC, TOKEN)
        expect(yield* check(yield* payTransfer(t, { program, destination }), t), program).toEqual({ reason: SvmReason.noTransfer, payer: null })
      }
    }))

  it.effect("TransferChecked data one byte short or one byte long is not a payment", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const amount = [...Buffer.from(new BigUint64Array([PRICE]).buffer)]
      for (const data of [Uint8Array.from([12, ...amount]), Uint8Array.from([12, ...amount, 6, 0])]) {
        expect(yield* check(yield* payTransfer(t, { data }), t), String(data.length)).toEqual({ reason: SvmReason.noTransfer, payer: null })
      }
    }))

  it.effect("a TransferChecked of three accounts (no authority) is not a payment", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t, { accountCount: 3 }), t)).toEqual({ reason: SvmReason.noTransfer, payer: null })
    }))

  it.effect("two TransferChecked are not one payment (the second could pay someone else)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const ix = yield* tokenInstruction(t.buyer, t.accepted)
      expect(yield* check(yield* payWith(t, ix, ix), t)).toEqual({ reason: SvmReason.noTransfer, payer: null })
    }))

  it("a payload that is no transaction is undecodable, with no payer", async () => {
    const terms = { asset: USDC, amount: PRICE, payTo: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", extra: {} }
    for (const payload of [null, {}, { transaction: "" }, { transaction: "AQID" }]) {
      expect(await checkSolana(payload, terms)).toEqual({ reason: SvmReason.undecodable, payer: null })
    }
  })
})

describe("checkSolana refuses a payment the fee payer could be made to fund", () => {
  it.effect("a fee payer other than the one the terms name", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const other = (yield* newSigner).address
      expect(yield* check(yield* payTransfer(t), t, { extra: { feePayer: other } })).toEqual({ reason: SvmReason.feePayerMismatch, payer: null })
    }))

  it.effect("the fee payer as the transfer authority: the facilitator would pay the seller from its own account", () =>
    Effect.gen(function*() {
      const t = yield* trade
      // The buyer names itself fee payer and signs: a valid signature, every other term right.
      const self = { ...t, accepted: { ...t.accepted, extra: { feePayer: t.buyer.address } } }
      const payload = yield* payTransfer(self)
      expect(yield* check(payload, t, { extra: { feePayer: t.buyer.address } }))
        .toEqual({ reason: SvmReason.feePayerTransferring, payer: t.buyer.address })
      expect(yield* check(payload, t, { extra: {} })).toEqual({ reason: SvmReason.feePayerTransferring, payer: t.buyer.address })
    }))
})

describe("checkSolana refuses a signature that is not the authority's over this message", () => {
  it.effect("an authority that signs nothing (a read-only account)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t, { authorityRole: AccountRole.READONLY }), t)).toEqual({ reason: SvmReason.signature, payer: null })
    }))

  it.effect("an empty signature slot", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const unsigned = withSignature(yield* payTransfer(t), t.buyer.address, new Uint8Array(64))
      expect(yield* check(unsigned, t)).toEqual({ reason: SvmReason.signature, payer: t.buyer.address })
    }))

  it.effect("the buyer's signature of another message (its payment of another amount)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payTransfer(t)
      const cheaper = yield* payTransfer(t, { amount: 1n })
      const theirs = yield* signWith(t.buyer, messageBytesOf(cheaper))
      expect(yield* check(withSignature(payload, t.buyer.address, theirs), t)).toEqual({ reason: SvmReason.signature, payer: t.buyer.address })
    }))

  it.effect("a signature of this very message by another key", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payTransfer(t)
      const forged = yield* signWith(yield* newSigner, messageBytesOf(payload))
      expect(yield* check(withSignature(payload, t.buyer.address, forged), t)).toEqual({ reason: SvmReason.signature, payer: t.buyer.address })
      // The control: the buyer's own signature of it, put back the same way, holds.
      const own = yield* signWith(t.buyer, messageBytesOf(payload))
      expect(yield* check(withSignature(payload, t.buyer.address, own), t)).toBeUndefined()
    }))

  it.effect("the buyer's signature with one bit flipped", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payTransfer(t)
      const signature = yield* signWith(t.buyer, messageBytesOf(payload))
      signature[10] = signature[10]! ^ 0x01
      expect(yield* check(withSignature(payload, t.buyer.address, signature), t)).toEqual({ reason: SvmReason.signature, payer: t.buyer.address })
    }))

  it.effect("a 63- or 65-byte signature slot shifts the message: never a valid payment", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const bytes = wireBytes(yield* payTransfer(t))
      // [count][fee payer's 64][buyer's 64][message]: one byte fewer or more in the buyer's slot.
      const buyerSlot = 1 + 64
      const short = Uint8Array.from([...bytes.subarray(0, buyerSlot + 63), ...bytes.subarray(buyerSlot + 64)])
      const long = Uint8Array.from([...bytes.subarray(0, buyerSlot + 64), 0, ...bytes.subarray(buyerSlot + 64)])
      for (const forged of [short, long]) {
        const result = yield* check(fromWireBytes(forged), t)
        expect([SvmReason.undecodable, SvmReason.signature, SvmReason.noTransfer]).toContain(result?.reason)
      }
    }))

  it("verifyEd25519 is false, never a rejection, for a signature of the wrong length or a key that is no address", async () => {
    const signer = await generateKeyPairSigner()
    const who = signer.address
    const message = new TextEncoder().encode("pay 0.01 USDC")
    const signature = Uint8Array.from(await signBytes(signer.keyPair.privateKey, message))
    expect(await verifyEd25519(who, signature, message)).toBe(true)
    expect(await verifyEd25519(who, signature.subarray(0, 63), message)).toBe(false)
    expect(await verifyEd25519(who, Uint8Array.from([...signature, 0]), message)).toBe(false)
    expect(await verifyEd25519(who, signature, new TextEncoder().encode("pay 0.02 USDC"))).toBe(false)
    expect(await verifyEd25519("not-an-address", signature, message)).toBe(false)
  })
})

describe("checkSolana refuses a transfer of the wrong terms", () => {
  it.effect("another mint, into payTo's ATA of that mint, of the right amount", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const mint = (yield* newSigner).address
      const destination = yield* ata(t.payTo, mint, TOKEN)
      expect(yield* check(yield* payTransfer(t, { mint, destination }), t)).toEqual({ reason: SvmReason.mintMismatch, payer: t.buyer.address })
    }))

  it.effect("a destination that is payTo's wallet itself, not its token account", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t, { destination: t.payTo }), t)).toEqual({ reason: SvmReason.recipientMismatch, payer: t.buyer.address })
    }))

  it.effect("another owner's ATA of the same mint", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const destination = yield* ata((yield* newSigner).address, USDC, TOKEN)
      expect(yield* check(yield* payTransfer(t, { destination }), t)).toEqual({ reason: SvmReason.recipientMismatch, payer: t.buyer.address })
    }))

  it.effect("payTo's Token-2022 ATA under the Token program, and its Token ATA under Token-2022", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const ata2022 = yield* ata(t.payTo, USDC, TOKEN_2022)
      expect(yield* check(yield* payTransfer(t, { destination: ata2022 }), t)).toEqual({ reason: SvmReason.recipientMismatch, payer: t.buyer.address })
      const ataToken = yield* ata(t.payTo, USDC, TOKEN)
      expect(yield* check(yield* payTransfer(t, { program: TOKEN_2022, destination: ataToken }), t))
        .toEqual({ reason: SvmReason.recipientMismatch, payer: t.buyer.address })
    }))

  it.effect("terms whose payTo is no address match no destination", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(yield* check(yield* payTransfer(t), t, { payTo: "not-a-solana-address" })).toEqual({ reason: SvmReason.recipientMismatch, payer: t.buyer.address })
    }))

  it.effect("one atomic unit less, or more, than the price", () =>
    Effect.gen(function*() {
      const t = yield* trade
      for (const amount of [PRICE - 1n, PRICE + 1n, 0n]) {
        expect(yield* check(yield* payTransfer(t, { amount }), t), String(amount)).toEqual({ reason: SvmReason.amountMismatch, payer: t.buyer.address })
      }
    }))
})

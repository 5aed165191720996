/*
 * Reading an `exact` SVM payment without trusting it (adapters/solana/SolanaPayment.ts): what counts as the
 * payment's TransferChecked, what the decoder refuses, and what identifies a payment. Look-alikes are built
 * byte for byte, real transactions with @solana/kit (test/support/solanaByHand.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getPublicKeyFromAddress,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes,
  verifySignature
} from "@solana/kit"
import { Effect, Either } from "effect"
import {
  associatedTokenAddress,
  base58,
  decodeSolanaPayment,
  isLighthouse,
  isMemo,
  parseComputeUnitLimit,
  parseComputeUnitPrice,
  parseTransferChecked,
  paymentTransfer,
  type SolanaInstruction,
  solanaPaymentIdentity
} from "../../../adapters/solana/SolanaPayment.js"
import {
  COMPUTE_BUDGET_PROGRAM,
  LIGHTHOUSE_PROGRAM,
  memo,
  MEMO_PROGRAM,
  messageBytesOf,
  signWith,
  tokenInstruction,
  wireBytes,
  fromWireBytes,
  withSignature
} from "../../support/solanaByHand.js"
import { newSigner, payTransfer, payWith, PRICE, TOKEN, TOKEN_2022, trade, USDC } from "./solanaSupport.js"

const le = (value: bigint, bytes: number): Array<number> =>
  Array.from({ length: bytes }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn))

const SOURCE = "7UX2i7SucgLMQcfZ75s3VXmZZY4YRUyJN9X1RgfMoDUi"
const DESTINATION = "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B"
const AUTHORITY = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"

/** A TransferChecked as it appears in a message: 12, the amount (u64 LE), the decimals; four accounts. */
const transferIx = (over: Partial<SolanaInstruction> = {}): SolanaInstruction => ({
  program: TOKEN,
  accounts: [SOURCE, USDC, DESTINATION, AUTHORITY],
  data: Uint8Array.from([12, ...le(PRICE, 8), 6]),
  ...over
})

const leftOf = <A>(e: Either.Either<A, string>): string => Either.match(e, { onLeft: (l) => l, onRight: () => "<right>" })

describe("parseTransferChecked: only a Token or Token-2022 TransferChecked is a payment", () => {
  it("reads a Token TransferChecked: accounts in order, the amount little-endian, the decimals", () => {
    expect(parseTransferChecked(transferIx())).toEqual({
      program: TOKEN,
      source: SOURCE,
      mint: USDC,
      destination: DESTINATION,
      authority: AUTHORITY,
      amount: PRICE,
      decimals: 6
    })
    // The full u64 range, byte order checked by a value whose bytes all differ.
    const amount = 0x0102030405060708n
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([12, ...le(amount, 8), 9]) }))).toMatchObject({ amount, decimals: 9 })
    const max = (1n << 64n) - 1n
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([12, ...le(max, 8), 0]) }))).toMatchObject({ amount: max, decimals: 0 })
  })

  it("reads a Token-2022 TransferChecked, naming its program", () => {
    expect(parseTransferChecked(transferIx({ program: TOKEN_2022 }))).toMatchObject({ program: TOKEN_2022, amount: PRICE })
  })

  it("reads the amount from the instruction's own bytes when they sit inside a larger buffer", () => {
    const buffer = Uint8Array.from([0xff, 0xff, 0xff, 12, ...le(PRICE, 8), 6, 0xff])
    expect(parseTransferChecked(transferIx({ data: buffer.subarray(3, 13) }))).toMatchObject({ amount: PRICE, decimals: 6 })
  })

  it("a look-alike program's instruction with TransferChecked's bytes is not a payment", () => {
    // One character off the Token program's id (still a valid address), a Token-program-shaped vanity id,
    // and programs the scheme names for other things.
    const lookAlikes = [
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DB",
      "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEc",
      "11111111111111111111111111111111",
      COMPUTE_BUDGET_PROGRAM,
      MEMO_PROGRAM,
      LIGHTHOUSE_PROGRAM
    ]
    for (const program of lookAlikes) expect(parseTransferChecked(transferIx({ program })), program).toBeUndefined()
  })

  it("an ApproveChecked (13) of the same accounts and amount is not a payment, nor a Transfer (3) or any other discriminator", () => {
    for (const discriminator of [13, 3, 0, 11, 26, 255]) {
      expect(parseTransferChecked(transferIx({ data: Uint8Array.from([discriminator, ...le(PRICE, 8), 6]) })), String(discriminator))
        .toBeUndefined()
    }
    // Transfer (3) has no decimals byte: nine bytes.
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([3, ...le(PRICE, 8)]) }))).toBeUndefined()
  })

  it("TransferChecked data one byte short or one byte long is not a payment", () => {
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([12, ...le(PRICE, 8)]) }))).toBeUndefined()
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([12, ...le(PRICE, 8), 6, 0]) }))).toBeUndefined()
    expect(parseTransferChecked(transferIx({ data: Uint8Array.from([12]) }))).toBeUndefined()
    expect(parseTransferChecked(transferIx({ data: new Uint8Array() }))).toBeUndefined()
  })

  it("a TransferChecked naming fewer than four accounts is not a payment; a multisig's extra signer accounts are allowed", () => {
    expect(parseTransferChecked(transferIx({ accounts: [SOURCE, USDC, DESTINATION] }))).toBeUndefined()
    expect(parseTransferChecked(transferIx({ accounts: [] }))).toBeUndefined()
    expect(parseTransferChecked(transferIx({ accounts: [SOURCE, USDC, DESTINATION, AUTHORITY, SOURCE] })))
      .toMatchObject({ source: SOURCE, mint: USDC, destination: DESTINATION, authority: AUTHORITY })
  })
})

describe("the other instructions of an exact SVM payment", () => {
  const compute = (data: ReadonlyArray<number>, program = COMPUTE_BUDGET_PROGRAM): SolanaInstruction => ({
    program,
    accounts: [],
    data: Uint8Array.from(data)
  })

  it("SetComputeUnitLimit: discriminator 2, u32 LE, five bytes, Compute Budget program only", () => {
    expect(parseComputeUnitLimit(compute([2, ...le(0x01020304n, 4)]))).toBe(0x01020304)
    expect(parseComputeUnitLimit(compute([2, ...le(20_000n, 4)]))).toBe(20_000)
    expect(parseComputeUnitLimit(compute([2, ...le(20_000n, 4), 0]))).toBeUndefined()
    expect(parseComputeUnitLimit(compute([2, ...le(20_000n, 3)]))).toBeUndefined()
    expect(parseComputeUnitLimit(compute([3, ...le(20_000n, 4)]))).toBeUndefined()
    expect(parseComputeUnitLimit(compute([2, ...le(20_000n, 4)], TOKEN))).toBeUndefined()
  })

  it("SetComputeUnitPrice: discriminator 3, u64 LE, nine bytes, Compute Budget program only", () => {
    expect(parseComputeUnitPrice(compute([3, ...le(0x0102030405060708n, 8)]))).toBe(0x0102030405060708n)
    expect(parseComputeUnitPrice(compute([3, ...le(1n, 8)]))).toBe(1n)
    expect(parseComputeUnitPrice(compute([3, ...le(1n, 8), 0]))).toBeUndefined()
    expect(parseComputeUnitPrice(compute([3, ...le(1n, 7)]))).toBeUndefined()
    expect(parseComputeUnitPrice(compute([2, ...le(1n, 8)]))).toBeUndefined()
    expect(parseComputeUnitPrice(compute([3, ...le(1n, 8)], MEMO_PROGRAM))).toBeUndefined()
  })

  it("a memo is the Memo program's, a Lighthouse assertion Lighthouse's, whatever their bytes", () => {
    expect(isMemo(compute([1, 2, 3], MEMO_PROGRAM))).toBe(true)
    expect(isMemo(compute([1, 2, 3], LIGHTHOUSE_PROGRAM))).toBe(false)
    expect(isLighthouse(compute([0], LIGHTHOUSE_PROGRAM))).toBe(true)
    expect(isLighthouse(compute([0], MEMO_PROGRAM))).toBe(false)
  })
})

describe("associatedTokenAddress", () => {
  it("is the ATA program's PDA of (owner, token program, mint): the values @solana-program/token-2022 derives", async () => {
    // findAssociatedTokenPda of @solana-program/token-2022 (as @x402/svm's facilitator calls it), for this owner and USDC.
    expect(await associatedTokenAddress(AUTHORITY, USDC, TOKEN)).toBe("FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B")
    expect(await associatedTokenAddress(AUTHORITY, USDC, TOKEN_2022)).toBe("GdjpegrtGwU3pgtzPivYVViSA8rmGL248qBVKzsrU3DD")
  })

  it("base58 is Solana's alphabet", () => {
    expect(base58(new Uint8Array(32))).toBe("11111111111111111111111111111111")
    expect(base58(Uint8Array.from([0, 0, 1]))).toBe("112")
  })
})

describe("decodeSolanaPayment refuses what is not one signed wire transaction", () => {
  it("a payload that is not { transaction: <non-empty string> }", () => {
    for (const payload of [null, undefined, "AQID", 42, [], {}, { transaction: 42 }, { transaction: null }, { transaction: "" }, { tx: "AQID" }]) {
      expect(leftOf(decodeSolanaPayment(payload)), JSON.stringify(payload)).toBe("payload must be { transaction: <base64 wire transaction> }")
    }
  })

  it.effect("bytes that are no transaction, or a transaction cut short by an account, could not be decoded", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const bytes = wireBytes(yield* payTransfer(t))
      for (const junk of ["AQID", "not base64 at all!", Buffer.from("hello world").toString("base64"), fromWireBytes(bytes.subarray(0, bytes.length - 40)).transaction]) {
        expect(leftOf(decodeSolanaPayment({ transaction: junk })), junk.slice(0, 16)).toBe("transaction could not be decoded")
      }
    }))

  it.effect("a transaction resolving accounts through an address lookup table is refused", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const transfer = yield* tokenInstruction(t.buyer, t.accepted)
      const destination = transfer.accounts![2]!.address
      const table = (yield* newSigner).address
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayer(address(t.feePayer), m),
        (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: base58(crypto.getRandomValues(new Uint8Array(32))) as Blockhash, lastValidBlockHeight: 1n }, m),
        (m) => appendTransactionMessageInstructions([transfer], m),
        (m) => compressTransactionMessageUsingAddressLookupTables(m, { [table]: [destination] })
      )
      const signed = yield* Effect.promise(() => partiallySignTransaction([t.buyer.keyPair], compileTransaction(message)))
      expect(leftOf(decodeSolanaPayment({ transaction: getBase64EncodedWireTransaction(signed) }))).toBe("address lookup tables are not accepted")
    }))

  it.effect("a transaction with no signer at all has no fee payer among its signers", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const bytes = wireBytes(yield* payWith(t, memo("x")))
      // [1 byte: 1 signature][64: the fee payer's empty slot][message: 0x80, numRequiredSignatures, ...]: no
      // signatures and a message that requires none.
      expect(bytes[0]).toBe(1)
      const message = Uint8Array.from(bytes.subarray(65))
      expect(message[0]).toBe(0x80)
      message[1] = 0
      message[2] = 0
      expect(leftOf(decodeSolanaPayment(fromWireBytes(Uint8Array.from([0, ...message]))))).toBe("fee payer is not the first signer")
    }))
})

describe("decodeSolanaPayment reads a transaction as signed", () => {
  it.effect("fee payer first, its slot empty; the buyer's signature over exactly the message bytes; instructions in order", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payWith(t, yield* tokenInstruction(t.buyer, t.accepted), memo("order-1"), { programAddress: address(MEMO_PROGRAM) })
      const decoded = Either.getOrThrow(decodeSolanaPayment(payload))
      expect(decoded.feePayer).toBe(t.feePayer)
      expect(decoded.signers.map((s) => s.address)).toEqual([t.feePayer, t.buyer.address])
      expect(decoded.signers[0]!.signature).toBeNull()
      const signature = decoded.signers[1]!.signature!
      expect(signature).toHaveLength(64)
      expect(decoded.messageBytes).toEqual(messageBytesOf(payload))
      const key = yield* Effect.promise(() => getPublicKeyFromAddress(t.buyer.address))
      expect(yield* Effect.promise(() => verifySignature(key, signature as SignatureBytes, decoded.messageBytes))).toBe(true)
      expect(decoded.instructions.map((ix) => ix.program)).toEqual([COMPUTE_BUDGET_PROGRAM, COMPUTE_BUDGET_PROGRAM, TOKEN, MEMO_PROGRAM, MEMO_PROGRAM])
      expect(decoded.instructions[0]).toEqual({ program: COMPUTE_BUDGET_PROGRAM, accounts: [], data: Uint8Array.from([2, ...le(20_000n, 4)]) })
      expect(decoded.instructions[3]!.data).toEqual(new TextEncoder().encode("order-1"))
      // An instruction with neither accounts nor data decodes to empty ones.
      expect(decoded.instructions[4]).toEqual({ program: MEMO_PROGRAM, accounts: [], data: new Uint8Array() })
      expect(parseTransferChecked(decoded.instructions[2]!)).toMatchObject({
        authority: t.buyer.address,
        mint: USDC,
        amount: PRICE,
        destination: yield* Effect.promise(() => associatedTokenAddress(t.payTo, USDC, TOKEN))
      })
    }))
})

describe("paymentTransfer: exactly one TransferChecked, its authority a signer", () => {
  it.effect("none, or two, is not a payment", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const none = Either.getOrThrow(decodeSolanaPayment(yield* payWith(t, memo())))
      expect(leftOf(paymentTransfer(none))).toBe("the transaction must hold exactly one TransferChecked")
      const approve = Either.getOrThrow(decodeSolanaPayment(yield* payTransfer(t, { discriminator: 13 })))
      expect(leftOf(paymentTransfer(approve))).toBe("the transaction must hold exactly one TransferChecked")
      const ix = yield* tokenInstruction(t.buyer, t.accepted)
      const two = Either.getOrThrow(decodeSolanaPayment(yield* payWith(t, ix, ix)))
      expect(leftOf(paymentTransfer(two))).toBe("the transaction must hold exactly one TransferChecked")
    }))

  it.effect("a transfer whose authority is a read-only account that signs nothing is refused", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const decoded = Either.getOrThrow(decodeSolanaPayment(yield* payTransfer(t, { authorityRole: AccountRole.READONLY })))
      expect(decoded.signers.map((s) => s.address)).toEqual([t.feePayer])
      expect(leftOf(paymentTransfer(decoded))).toBe("the transfer authority does not sign the transaction")
    }))

  it("a decoded payment whose transfer authority is no address is refused before any signer is looked up", () => {
    const decoded = {
      messageBytes: new Uint8Array(),
      signers: [{ address: AUTHORITY, signature: null }, { address: "not an address", signature: new Uint8Array(64) }],
      feePayer: AUTHORITY,
      instructions: [transferIx({ accounts: [SOURCE, USDC, DESTINATION, "not an address"] })]
    }
    expect(leftOf(paymentTransfer(decoded))).toBe("transfer authority is not an address")
  })

  it.effect("the one transfer, with its authority's signature", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const decoded = Either.getOrThrow(decodeSolanaPayment(yield* payTransfer(t)))
      const found = Either.getOrThrow(paymentTransfer(decoded))
      expect(found.transfer).toMatchObject({ authority: t.buyer.address, amount: PRICE })
      expect(found.signature).toEqual(decoded.signers[1]!.signature)
    }))
})

describe("solanaPaymentIdentity: the buyer's signature identifies the payment", () => {
  it.effect("key solana:<the authority's signature, base58>, payer the authority, no settle-by date", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payTransfer(t)
      const signature = Either.getOrThrow(decodeSolanaPayment(payload)).signers[1]!.signature!
      expect(solanaPaymentIdentity(payload)).toEqual(Either.right({
        key: `solana:${getBase58Decoder().decode(signature)}`,
        payer: t.buyer.address,
        settleBy: null
      }))
      // The fee payer signs at settlement: its signature does not change the payment's identity.
      const feePayerSigned = withSignature(payload, t.feePayer, crypto.getRandomValues(new Uint8Array(64)))
      expect(solanaPaymentIdentity(feePayerSigned)).toEqual(solanaPaymentIdentity(payload))
      // Another payment by the same buyer is another payment.
      const other = yield* payTransfer(t, { amount: PRICE + 1n })
      expect(Either.getOrThrow(solanaPaymentIdentity(other)).key).not.toBe(Either.getOrThrow(solanaPaymentIdentity(payload)).key)
    }))

  it.effect("a payment whose fee payer is its transfer authority has no identity (the facilitator would pay itself)", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const payload = yield* payTransfer({ ...t, accepted: { ...t.accepted, extra: { feePayer: t.buyer.address } } })
      expect(leftOf(solanaPaymentIdentity(payload))).toBe("the fee payer cannot be the transfer authority")
    }))

  it.effect("a payment its authority has not signed has no identity", () =>
    Effect.gen(function*() {
      const t = yield* trade
      const unsigned = withSignature(yield* payTransfer(t), t.buyer.address, new Uint8Array(64))
      expect(leftOf(solanaPaymentIdentity(unsigned))).toBe("the transfer authority has not signed")
    }))

  it.effect("what is not a payment has no identity: an ApproveChecked, a look-alike program, an undecodable payload", () =>
    Effect.gen(function*() {
      const t = yield* trade
      expect(leftOf(solanaPaymentIdentity(yield* payTransfer(t, { discriminator: 13 })))).toBe("the transaction must hold exactly one TransferChecked")
      const lookAlike = yield* payTransfer(t, { program: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DB" })
      expect(leftOf(solanaPaymentIdentity(lookAlike))).toBe("the transaction must hold exactly one TransferChecked")
      expect(leftOf(solanaPaymentIdentity({ transaction: "AQID" }))).toBe("transaction could not be decoded")
    }))
})

/*
 * `exact` SVM payments built by hand with @solana/kit, in the shapes real wallets send and the official
 * client never builds: a Lighthouse assertion or two injected by the wallet (Phantom, Solflare), or an
 * instruction of a program the scheme does not allow. The buyer signs; the fee payer's slot stays empty.
 */
import {
  AccountRole,
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash
} from "@solana/kit"
import type { PaymentRequirements } from "@x402/core/types"
import { Effect } from "effect"
import { associatedTokenAddress } from "../../adapters/solana/SolanaPayment.js"

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111"
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
/** The Lighthouse program Phantom and Solflare call to assert the wallet's state after the transaction. */
export const LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"
/** Any program the scheme does not name (the System program). */
export const OTHER_PROGRAM = "11111111111111111111111111111111"

const le = (value: bigint, bytes: number): Array<number> =>
  Array.from({ length: bytes }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn))

export const computeUnitLimit = (units: number): Instruction => ({
  programAddress: address(COMPUTE_BUDGET_PROGRAM),
  data: Uint8Array.from([2, ...le(BigInt(units), 4)])
})

export const computeUnitPrice = (microLamports: bigint): Instruction => ({
  programAddress: address(COMPUTE_BUDGET_PROGRAM),
  data: Uint8Array.from([3, ...le(microLamports, 8)])
})

export const memo = (text = crypto.randomUUID().replaceAll("-", "")): Instruction => ({
  programAddress: address(MEMO_PROGRAM),
  data: new TextEncoder().encode(text)
})

/** A Lighthouse-shaped assertion on `account` (read-only); its bytes are opaque to the facilitator. */
export const lighthouse = (account: string, tag = 0): Instruction => ({
  programAddress: address(LIGHTHOUSE_PROGRAM),
  accounts: [{ address: address(account), role: AccountRole.READONLY }],
  data: Uint8Array.from([tag, 1, 0, 0, 0, 0, 0, 0, 0, 0])
})

/** An instruction of a program the scheme does not allow, touching `account`. */
export const otherProgram = (account: string): Instruction => ({
  programAddress: address(OTHER_PROGRAM),
  accounts: [{ address: address(account), role: AccountRole.READONLY }],
  data: Uint8Array.from([0])
})

/** The buyer's token account for the requirement's mint (Token program), which Lighthouse asserts on. */
export const sourceOf = (buyer: KeyPairSigner, accepted: PaymentRequirements) =>
  Effect.promise(() => associatedTokenAddress(buyer.address, accepted.asset, TOKEN_PROGRAM))

/** TransferChecked of `accepted.amount` (6 decimals) from the buyer's token account to the payTo's. */
export const transferChecked = (buyer: KeyPairSigner, accepted: PaymentRequirements) =>
  Effect.promise(async (): Promise<Instruction> => {
    const source = await associatedTokenAddress(buyer.address, accepted.asset, TOKEN_PROGRAM)
    const destination = await associatedTokenAddress(accepted.payTo, accepted.asset, TOKEN_PROGRAM)
    return {
      programAddress: address(TOKEN_PROGRAM),
      accounts: [
        { address: address(source), role: AccountRole.WRITABLE },
        { address: address(accepted.asset), role: AccountRole.READONLY },
        { address: address(destination), role: AccountRole.WRITABLE },
        { address: buyer.address, role: AccountRole.READONLY_SIGNER }
      ],
      data: Uint8Array.from([12, ...le(BigInt(accepted.amount), 8), 6])
    }
  })

const blockhashOf = (accepted: PaymentRequirements): Blockhash =>
  (typeof accepted.extra["recentBlockhash"] === "string"
    ? accepted.extra["recentBlockhash"]
    : getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))) as Blockhash

/**
 * The `exact` payload of a transaction holding `instructions` in this order, fee payer and blockhash from
 * the requirement's `extra` (a live requirement names no blockhash: a random one then), signed by the buyer only.
 */
export const solanaPayload = (buyer: KeyPairSigner, accepted: PaymentRequirements, instructions: ReadonlyArray<Instruction>) =>
  Effect.promise(async () => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(String(accepted.extra["feePayer"])) as Address, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhashOf(accepted), lastValidBlockHeight: 1_000_000n },
          m
        ),
      (m) => appendTransactionMessageInstructions(instructions, m)
    )
    const signed = await partiallySignTransaction([buyer.keyPair], compileTransaction(message))
    return { transaction: getBase64EncodedWireTransaction(signed) }
  })

/** The standard head of an `exact` SVM transaction: compute limit, compute price (1 µlamport), transfer. */
export const standardHead = (buyer: KeyPairSigner, accepted: PaymentRequirements) =>
  Effect.map(transferChecked(buyer, accepted), (transfer) => [computeUnitLimit(20_000), computeUnitPrice(1n), transfer])

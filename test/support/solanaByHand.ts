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
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
  type SignatureBytes
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

/** A TransferChecked-shaped token instruction with any part replaced: for forged and look-alike payments. */
export interface TransferParts {
  /** The program called; Token by default. */
  readonly program?: string
  /** The buyer's Token-program ATA by default. */
  readonly source?: string
  /** The requirement's asset by default. */
  readonly mint?: string
  /** The payTo's associated token account under `program` by default. */
  readonly destination?: string
  /** The buyer by default. */
  readonly authority?: string
  /** READONLY_SIGNER by default; READONLY makes an authority that need not sign. */
  readonly authorityRole?: AccountRole
  /** The requirement's amount by default. */
  readonly amount?: bigint
  /** 6 by default. */
  readonly decimals?: number
  /** The first data byte: 12 (TransferChecked) by default; 13 is ApproveChecked, 3 Transfer. */
  readonly discriminator?: number
  /** Replaces the whole data (discriminator, amount and decimals ignored). */
  readonly data?: Uint8Array
  /** Keeps only the first this many of the four accounts. */
  readonly accountCount?: number
  /** Accounts after the four (a multisig's signers), read-only. */
  readonly extraAccounts?: ReadonlyArray<string>
}

/** A token instruction laid out as TransferChecked, each part as `parts` says (see `TransferParts`). */
export const tokenInstruction = (buyer: KeyPairSigner, accepted: PaymentRequirements, parts: TransferParts = {}) =>
  Effect.promise(async (): Promise<Instruction> => {
    const program = parts.program ?? TOKEN_PROGRAM
    const mint = parts.mint ?? accepted.asset
    const source = parts.source ?? await associatedTokenAddress(buyer.address, accepted.asset, TOKEN_PROGRAM)
    const destination = parts.destination ?? await associatedTokenAddress(accepted.payTo, accepted.asset, program)
    const accounts = [
      { address: address(source), role: AccountRole.WRITABLE },
      { address: address(mint), role: AccountRole.READONLY },
      { address: address(destination), role: AccountRole.WRITABLE },
      { address: address(parts.authority ?? buyer.address), role: parts.authorityRole ?? AccountRole.READONLY_SIGNER }
    ].slice(0, parts.accountCount ?? 4)
    const extra = (parts.extraAccounts ?? []).map((a) => ({ address: address(a), role: AccountRole.READONLY }))
    return {
      programAddress: address(program),
      accounts: [...accounts, ...extra],
      data: parts.data ??
        Uint8Array.from([parts.discriminator ?? 12, ...le(parts.amount ?? BigInt(accepted.amount), 8), parts.decimals ?? 6])
    }
  })

/** The wire bytes of an `exact` SVM payload. */
export const wireBytes = (payload: { readonly transaction: string }): Uint8Array =>
  Uint8Array.from(getBase64Encoder().encode(payload.transaction))

/** The payload whose transaction is `bytes`. */
export const fromWireBytes = (bytes: Uint8Array): { transaction: string } => ({
  transaction: Buffer.from(bytes).toString("base64")
})

/** The payload with `signer`'s signature slot holding `signature` (64 bytes; all zeros reads as no signature). */
export const withSignature = (payload: { readonly transaction: string }, signer: string, signature: Uint8Array) => {
  const decoded = getTransactionDecoder().decode(wireBytes(payload))
  if (!(signer in decoded.signatures)) throw new Error(`${signer} is not a signer of this transaction`)
  const signatures = { ...decoded.signatures, [signer]: signature as SignatureBytes }
  return fromWireBytes(Uint8Array.from(getTransactionEncoder().encode({ ...decoded, signatures })))
}

/** The bytes a payload's signers sign. */
export const messageBytesOf = (payload: { readonly transaction: string }): Uint8Array =>
  Uint8Array.from(getTransactionDecoder().decode(wireBytes(payload)).messageBytes)

/** `signer`'s ed25519 signature of `message` (any bytes). */
export const signWith = (signer: KeyPairSigner, message: Uint8Array) =>
  Effect.promise(async () => Uint8Array.from(await signBytes(signer.keyPair.privateKey, message)))

/**
 * As `solanaPayload`, signed by `signers` only (none: a transaction whose only required signer is the fee payer,
 * such as one whose transfer authority is a read-only account).
 */
export const solanaPayloadSignedBy = (
  signers: ReadonlyArray<KeyPairSigner>,
  accepted: PaymentRequirements,
  instructions: ReadonlyArray<Instruction>
) =>
  Effect.promise(async () => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(String(accepted.extra["feePayer"])) as Address, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhashOf(accepted), lastValidBlockHeight: 1_000_000n }, m),
      (m) => appendTransactionMessageInstructions(instructions, m)
    )
    const compiled = compileTransaction(message)
    const signed = signers.length === 0 ? compiled : await partiallySignTransaction(signers.map((s) => s.keyPair), compiled)
    return { transaction: getBase64EncodedWireTransaction(signed) }
  })

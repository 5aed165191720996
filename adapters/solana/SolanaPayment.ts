import {
  type Address,
  decompileTransactionMessage,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Instruction,
  isAddress,
  isSignerRole,
  type ReadonlyUint8Array
} from "@solana/kit"
import { Either } from "effect"

/*
 * Reading an x402 `exact` SVM payment (`{ transaction: <base64 wire transaction> }`) without trusting it.
 * Instruction layouts are decoded here by hand (they are a few fixed bytes) because the @solana-program/*
 * clients are only transitive dependencies of @x402/svm, not importable from this package.
 */

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111"
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
/** Lighthouse: the assertions Phantom (one) and Solflare (two) inject to protect their users. */
export const LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"
const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"

const TRANSFER_CHECKED = 12
const SET_COMPUTE_UNIT_LIMIT = 2
const SET_COMPUTE_UNIT_PRICE = 3

/** One instruction as it appears in the message, lookups already rejected. */
export interface SolanaInstruction {
  readonly program: string
  readonly accounts: ReadonlyArray<string>
  readonly data: Uint8Array
}

export interface TransferChecked {
  readonly program: string
  readonly source: string
  readonly mint: string
  readonly destination: string
  readonly authority: string
  readonly amount: bigint
  readonly decimals: number
}

/** A Solana payment transaction, decoded but not yet trusted. */
export interface DecodedSolanaPayment {
  /** The bytes every signer signs. */
  readonly messageBytes: Uint8Array
  /** Fee payer first, then the other required signers, with their signatures (null when not signed yet). */
  readonly signers: ReadonlyArray<{ readonly address: string; readonly signature: Uint8Array | null }>
  /** The fee payer's address. */
  readonly feePayer: string
  /** The transaction's instructions, decoded. */
  readonly instructions: ReadonlyArray<SolanaInstruction>
}

const u64le = (bytes: Uint8Array, at: number): bigint => new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(at, true)
const u32le = (bytes: Uint8Array, at: number): number => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at, true)

const copy = (bytes: ReadonlyUint8Array): Uint8Array => Uint8Array.from(bytes)

/** Decodes the base64 wire transaction of an `exact` SVM payload; Left names what is wrong. */
export const decodeSolanaPayment = (payload: unknown): Either.Either<DecodedSolanaPayment, string> => {
  const transaction = typeof payload === "object" && payload !== null ? (payload as { transaction?: unknown }).transaction : undefined
  if (typeof transaction !== "string" || transaction.length === 0) {
    return Either.left("payload must be { transaction: <base64 wire transaction> }")
  }
  try {
    const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction))
    const compiled = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes)
    if ("addressTableLookups" in compiled && (compiled.addressTableLookups?.length ?? 0) > 0) {
      return Either.left("address lookup tables are not accepted")
    }
    const message = decompileTransactionMessage(compiled)
    const messageInstructions: ReadonlyArray<Instruction> = message.instructions
    const signers = Object.entries(decoded.signatures).map(([address, signature]) => ({
      address,
      signature: signature === null ? null : copy(signature)
    }))
    const instructions = messageInstructions.map((ix) => ({
      program: ix.programAddress,
      accounts: (ix.accounts ?? []).map((meta) => meta.address),
      data: copy(ix.data ?? new Uint8Array())
    }))
    // The decoder keys signatures by the message's signer accounts, fee payer first; make sure it agrees.
    if (signers[0]?.address !== message.feePayer.address) return Either.left("fee payer is not the first signer")
    for (const ix of messageInstructions) {
      for (const meta of ix.accounts ?? []) {
        if ("role" in meta && isSignerRole(meta.role) && !signers.some((s) => s.address === meta.address)) {
          return Either.left("an instruction names a signer the transaction does not carry")
        }
      }
    }
    return Either.right({ messageBytes: copy(decoded.messageBytes), signers, feePayer: message.feePayer.address, instructions })
  } catch {
    return Either.left("transaction could not be decoded")
  }
}

/** Parses a TransferChecked (Token or Token-2022) instruction; undefined for anything else. */
export const parseTransferChecked = (ix: SolanaInstruction): TransferChecked | undefined => {
  if (ix.program !== TOKEN_PROGRAM && ix.program !== TOKEN_2022_PROGRAM) return undefined
  if (ix.data.length !== 10 || ix.data[0] !== TRANSFER_CHECKED || ix.accounts.length < 4) return undefined
  const [source, mint, destination, authority] = ix.accounts as [string, string, string, string]
  return { program: ix.program, source, mint, destination, authority, amount: u64le(ix.data, 1), decimals: ix.data[9]! }
}

/** `SetComputeUnitLimit` units, or undefined when the instruction is not one. */
export const parseComputeUnitLimit = (ix: SolanaInstruction): number | undefined =>
  ix.program === COMPUTE_BUDGET_PROGRAM && ix.data.length === 5 && ix.data[0] === SET_COMPUTE_UNIT_LIMIT
    ? u32le(ix.data, 1)
    : undefined

/** `SetComputeUnitPrice` micro-lamports, or undefined when the instruction is not one. */
export const parseComputeUnitPrice = (ix: SolanaInstruction): bigint | undefined =>
  ix.program === COMPUTE_BUDGET_PROGRAM && ix.data.length === 9 && ix.data[0] === SET_COMPUTE_UNIT_PRICE
    ? u64le(ix.data, 1)
    : undefined

export const isMemo = (ix: SolanaInstruction): boolean => ix.program === MEMO_PROGRAM

export const isLighthouse = (ix: SolanaInstruction): boolean => ix.program === LIGHTHOUSE_PROGRAM

/** The associated token account of `owner` for `mint` under a token program (the standard PDA). */
export const associatedTokenAddress = async (owner: string, mint: string, tokenProgram: string): Promise<string> => {
  const encoder = getAddressEncoder()
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM as Address,
    seeds: [encoder.encode(owner as Address), encoder.encode(tokenProgram as Address), encoder.encode(mint as Address)]
  })
  return pda
}

export const base58 = (bytes: Uint8Array): string => getBase58Decoder().decode(bytes)

/** The single token transfer of a decoded payment and its authority's signature, when there is exactly one. */
export const paymentTransfer = (
  decoded: DecodedSolanaPayment
): Either.Either<{ readonly transfer: TransferChecked; readonly signature: Uint8Array | null }, string> => {
  const transfers = decoded.instructions.flatMap((ix) => parseTransferChecked(ix) ?? [])
  if (transfers.length !== 1) return Either.left("the transaction must hold exactly one TransferChecked")
  const transfer = transfers[0]!
  if (!isAddress(transfer.authority)) return Either.left("transfer authority is not an address")
  const signer = decoded.signers.find((s) => s.address === transfer.authority)
  if (signer === undefined) return Either.left("the transfer authority does not sign the transaction")
  return Either.right({ transfer, signature: signer.signature })
}

/**
 * What identifies an SVM payment: the transfer authority's signature over the message. The fee payer
 * (index 0) is the facilitator and signs only at settlement, so its slot cannot identify the buyer.
 */
export const solanaPaymentIdentity = (
  payload: unknown
): Either.Either<{ key: string; payer: string; settleBy: Date | null }, string> =>
  Either.flatMap(decodeSolanaPayment(payload), (decoded) =>
    Either.flatMap(paymentTransfer(decoded), ({ transfer, signature }) => {
      if (transfer.authority === decoded.feePayer) return Either.left("the fee payer cannot be the transfer authority")
      if (signature === null || signature.length !== 64) return Either.left("the transfer authority has not signed")
      // The transaction names no expiry itself (its blockhash ages out on chain): the caller bounds it.
      return Either.right({ key: `solana:${base58(signature)}`, payer: transfer.authority, settleBy: null })
    }))

/*
 * Shared by the Solana payment tests of this folder: a buyer, a payee and a fee payer with fresh keys, the
 * requirement they trade under, and the standard `exact` payment (compute limit, compute price, TransferChecked)
 * that each forgery differs from by one thing.
 */
import { AccountRole, generateKeyPairSigner, type Instruction, type KeyPairSigner } from "@solana/kit"
import type { PaymentRequirements } from "@x402/core/types"
import { Effect } from "effect"
import type { SolanaTerms } from "../../../adapters/solana/SolanaCheck.js"
import { computeUnitLimit, computeUnitPrice, solanaPayloadSignedBy, tokenInstruction, type TransferParts } from "../../support/solanaByHand.js"

export const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
export const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
/** USDC's mainnet mint: the checks need no chain, so any mint serves. */
export const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
export const PRICE = 10_000n

export const newSigner = Effect.promise(() => generateKeyPairSigner())

export interface Trade {
  readonly buyer: KeyPairSigner
  readonly payTo: string
  readonly feePayer: string
  /** The requirement as the official clients and solanaByHand take it. */
  readonly accepted: PaymentRequirements
  /** The same terms as checkSolana takes them. */
  readonly terms: SolanaTerms
}

export const trade = Effect.gen(function*() {
  const buyer = yield* newSigner
  const payTo = (yield* newSigner).address
  const feePayer = (yield* newSigner).address
  const accepted: PaymentRequirements = {
    scheme: "exact",
    network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
    asset: USDC,
    amount: PRICE.toString(),
    payTo,
    maxTimeoutSeconds: 300,
    extra: { feePayer }
  }
  const terms: SolanaTerms = { asset: USDC, amount: PRICE, payTo, extra: { feePayer } }
  return { buyer, payTo, feePayer, accepted, terms } satisfies Trade
})

/**
 * compute limit, compute price, then the given instructions; signed by the buyer when an instruction names it as
 * a signer, the fee payer's slot empty.
 */
export const payWith = (t: Trade, ...instructions: ReadonlyArray<Instruction>) => {
  const buyerSigns = instructions.some((ix) =>
    (ix.accounts ?? []).some((a) => a.address === t.buyer.address && (a.role === AccountRole.READONLY_SIGNER || a.role === AccountRole.WRITABLE_SIGNER))
  ) || t.accepted.extra["feePayer"] === t.buyer.address
  return solanaPayloadSignedBy(buyerSigns ? [t.buyer] : [], t.accepted, [computeUnitLimit(20_000), computeUnitPrice(1n), ...instructions])
}

/** The standard payment with its token instruction changed as `parts` says. */
export const payTransfer = (t: Trade, parts: TransferParts = {}) =>
  Effect.flatMap(tokenInstruction(t.buyer, t.accepted, parts), (ix) => payWith(t, ix))

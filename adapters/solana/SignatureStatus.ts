import { Effect, Either, Redacted } from "effect"
import type { Sale } from "../../domain/Sale.js"
import { TRANSACTION_FAILED, TRANSFER_MISMATCH } from "../../domain/SettlementReasons.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"
import { associatedTokenAddress, base58, decodeSolanaPayment, paymentTransfer } from "./SolanaPayment.js"

/** Where and how the Solana status reader asks the chain. */
export interface SignatureStatusOptions {
  /** The CAIP-2 network this RPC endpoint serves (only its sales are read). */
  readonly network: string
  /** Limit on each RPC call. */
  readonly timeoutMs: number
  /** Signatures asked for per `getSignaturesForAddress` call (the RPC's own cap is 1 000). */
  readonly pageSize?: number
  /** Pages of the payer's history read at most per status read. */
  readonly pages?: number
  /** Transactions fetched (`getTransaction`) at most per status read. */
  readonly transactions?: number
}

/** How long before its sale was recorded a payment's transaction is looked for (clocks differ; block times are the producer's). */
export const LANDING_MARGIN_MS = 5 * 60_000

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/

/** A sale's transaction signature, from its payment key `<network>:solana:<signature>`: the buyer's (the transfer authority's). */
export const signatureOf = (sale: Sale): string | null => {
  const prefix = `${sale.network}:solana:`
  if (!sale.paymentKey.startsWith(prefix)) return null
  const signature = sale.paymentKey.slice(prefix.length)
  return BASE58.test(signature) ? signature : null
}

/** One entry of `getSignaturesForAddress`: a transaction by its id (its first signature), newest first. */
interface SignatureEntry {
  readonly signature: string
  readonly err: unknown
  readonly blockTime?: number | null
  readonly confirmationStatus?: string | null
}

/** `getTransaction` with base64 encoding: the wire transaction and whether it failed. */
interface TransactionAnswer {
  readonly transaction: readonly [string, string]
  readonly meta: { readonly err: unknown } | null
}

const unknown = (reason: string): SettlementStatus => ({ _tag: "Unknown", reason })

/**
 * Whether a landed transaction is the sale's payment, and what it did. It is the sale's only if it carries the
 * buyer's signature (the payment key) as the signature of the sale's payer: then it is the very message the
 * buyer signed (null otherwise: someone else's transaction). It pays the sale (`matches`) only if its single
 * TransferChecked moves exactly the sale's amount of the sale's mint into `payTo`'s associated token account
 * with the payer as authority; anything else is a `mismatch`.
 */
export const paymentInTransaction = async (
  wire: string,
  sale: Pick<Sale, "payer" | "payTo" | "asset" | "amount">,
  signature: string
): Promise<"matches" | "mismatch" | null> => {
  const decoded = decodeSolanaPayment({ transaction: wire })
  if (Either.isLeft(decoded)) return null
  const signer = decoded.right.signers.find((s) => s.address === sale.payer)
  if (signer?.signature == null || base58(signer.signature) !== signature) return null
  const found = paymentTransfer(decoded.right)
  if (Either.isLeft(found)) return "mismatch"
  const { transfer } = found.right
  if (transfer.authority !== sale.payer || transfer.mint !== sale.asset || transfer.amount !== sale.amount) return "mismatch"
  try {
    return transfer.destination === await associatedTokenAddress(sale.payTo, transfer.mint, transfer.program) ? "matches" : "mismatch"
  } catch {
    // `payTo` is no address: nothing can be paid to it.
    return "mismatch"
  }
}

/**
 * Reads what became of a Solana sale's payment. Solana's RPC knows a transaction only by its first signature
 * (its id), which is the fee payer's — the facilitator's, added at settlement — so the buyer's signature (the
 * payment key) cannot be looked up directly. Instead the payer's own history (`getSignaturesForAddress`; the
 * payer signs, so every transaction it authorised is listed there) is read newest first over the sale's time
 * window, and each candidate's transaction (`getTransaction`) is checked for the buyer's signature and the
 * sale's transfer (`paymentInTransaction`):
 * - found, `finalized`, succeeded and paying the sale → settled with the transaction's id;
 * - found and final but failed on chain, or transferring otherwise → failed (the same message can never land again);
 * - found but not final yet → not final (the sale stays pending);
 * - the whole window searched without it → unsettled (it may still land until `settleBy`);
 * - more history than the read's bounds, or no answer → unknown, never unsettled.
 * Plain fetch: two methods need no client library. The URL may hold an API key: no error text is passed on.
 */
export const makeSignatureStatus = (url: Redacted.Redacted<string>, options: SignatureStatusOptions) => {
  const pageSize = options.pageSize ?? 1_000
  const pages = options.pages ?? 5
  const budget = options.transactions ?? 25

  /** One JSON-RPC call: its `result`, or a failure for anything else (no answer, an HTTP error, an `error` answer). */
  const rpc = <A>(method: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise(async (signal) => {
      const res = await fetch(Redacted.value(url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        signal
      })
      const answer = (await res.json()) as { readonly result?: A; readonly error?: unknown }
      if (!res.ok || answer.error !== undefined || answer.result === undefined) throw new Error()
      return answer.result
    }).pipe(Effect.timeout(options.timeoutMs))

  const read = (sale: Sale) =>
    Effect.gen(function*() {
      const signature = signatureOf(sale)
      if (sale.network !== options.network || signature === null) return unknown("not a Solana payment on this network")
      // Its transaction can land only after the sale was recorded (the facilitator signs at settle) and
      // before its blockhash expired (`settleBy`); margins for clocks.
      const earliest = sale.createdAt.getTime() - LANDING_MARGIN_MS
      const latest = (sale.settleBy ?? sale.createdAt).getTime() + LANDING_MARGIN_MS
      let before: string | undefined
      let fetched = 0
      for (let page = 0; page < pages; page++) {
        // (`before` undefined on the first page: JSON leaves it out.)
        const entries = yield* rpc<ReadonlyArray<SignatureEntry>>("getSignaturesForAddress", [
          sale.payer,
          { limit: pageSize, commitment: "confirmed", before }
        ])
        if (!Array.isArray(entries)) return unknown("the Solana RPC endpoint answered with an error")
        for (const entry of entries) {
          const at = typeof entry.blockTime === "number" ? entry.blockTime * 1000 : null
          if (at !== null && at < earliest) return { _tag: "Unsettled" } as const
          // Stryker disable next-line ConditionalExpression: a null block time compares as 0, never past `latest`
          if (at !== null && at > latest) continue
          if (fetched >= budget) return unknown("the payer's history holds more transactions than one read checks")
          fetched++
          const tx = yield* rpc<TransactionAnswer | null>("getTransaction", [
            entry.signature,
            { encoding: "base64", commitment: "confirmed", maxSupportedTransactionVersion: 0 }
          ])
          if (tx === null || !Array.isArray(tx.transaction) || typeof tx.transaction[0] !== "string") {
            return unknown("a listed transaction could not be read")
          }
          const verdict = yield* Effect.promise(() => paymentInTransaction(tx.transaction[0], sale, signature))
          if (verdict === null) continue
          // The sale's own transaction: what it did counts once final.
          if (entry.confirmationStatus !== "finalized") return { _tag: "NotFinal", reason: "the transaction is on chain but not final yet" } as const
          if (tx.meta == null) return unknown("the transaction's outcome is not known")
          if (tx.meta.err != null) return { _tag: "Failed", reason: TRANSACTION_FAILED } as const
          switch (verdict) {
            case "matches":
              return { _tag: "Settled", transaction: entry.signature } as const
            case "mismatch":
              return { _tag: "Failed", reason: TRANSFER_MISMATCH } as const
          }
        }
        if (entries.length < pageSize) return { _tag: "Unsettled" } as const
        before = entries[entries.length - 1]!.signature
      }
      return unknown("the payer's history is longer than one read searches")
    }).pipe(
      Effect.catchAll(() => Effect.succeed(unknown("the Solana RPC endpoint did not answer"))),
      // Stryker disable next-line StringLiteral: a span's name labels traces, it decides nothing
      Effect.withSpan("SignatureStatus.read")
    )

  return (sale: Sale): Effect.Effect<SettlementStatus> => read(sale)
}

import { Effect, Redacted } from "effect"
import type { Sale } from "../../domain/Sale.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"

/** Where and how the Solana status reader asks the chain. */
export interface SignatureStatusOptions {
  /** The CAIP-2 network this RPC endpoint serves (only its sales are read). */
  readonly network: string
  /** Limit on each RPC call. */
  readonly timeoutMs: number
}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/

/** A sale's transaction signature, from its payment key `<network>:solana:<signature>`. */
export const signatureOf = (sale: Sale): string | null => {
  const prefix = `${sale.network}:solana:`
  if (!sale.paymentKey.startsWith(prefix)) return null
  const signature = sale.paymentKey.slice(prefix.length)
  return BASE58.test(signature) ? signature : null
}

interface StatusAnswer {
  readonly result?: {
    readonly value?: ReadonlyArray<{
      readonly err: unknown
      readonly confirmationStatus?: string | null
      /** null once rooted (older nodes name no confirmationStatus then). */
      readonly confirmations?: number | null
    } | null>
  }
  readonly error?: unknown
}

const unknown = (reason: string): SettlementStatus => ({ _tag: "Unknown", reason })

/**
 * Reads whether a Solana sale's transaction landed, by its signature (the payment key), with JSON-RPC
 * `getSignatureStatuses` searching the whole history. Confirmed or finalized without error → settled (the
 * transaction is the signature); landed with an error, or not found → unsettled (the sale fails once its
 * `settleBy` has passed, by when the transaction's blockhash has expired); only processed → unknown (it
 * may still be dropped or confirm); no answer → unknown. Plain fetch: one call needs no client library.
 * The URL may hold an API key: no error text is passed on.
 */
export const makeSignatureStatus = (url: Redacted.Redacted<string>, options: SignatureStatusOptions) => {
  const request = (signature: string) =>
    Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(Redacted.value(url), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "getSignatureStatuses",
            params: [[signature], { searchTransactionHistory: true }]
          }),
          signal
        })
        if (!res.ok) throw new Error("status")
        return (await res.json()) as StatusAnswer
      },
      catch: () => "rpc_failed" as const
    }).pipe(Effect.timeoutFail({ duration: options.timeoutMs, onTimeout: () => "rpc_failed" as const }))

  return (sale: Sale): Effect.Effect<SettlementStatus> =>
    Effect.gen(function*() {
      const signature = signatureOf(sale)
      if (sale.network !== options.network || signature === null) return unknown("not a Solana payment on this network")
      const answer = yield* Effect.either(request(signature))
      if (answer._tag === "Left") return unknown("the Solana RPC endpoint did not answer")
      const value = answer.right.result?.value
      if (answer.right.error !== undefined || !Array.isArray(value) || value.length !== 1) {
        return unknown("the Solana RPC endpoint answered with an error")
      }
      const status = value[0]
      if (status === null || status === undefined) return { _tag: "Unsettled" } as const
      if (status.err !== null && status.err !== undefined) return { _tag: "Unsettled" } as const
      const rooted = (status.confirmationStatus === undefined || status.confirmationStatus === null) && status.confirmations === null
      if (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized" || rooted) {
        return { _tag: "Settled", transaction: signature } as const
      }
      return unknown("the transaction is processed but not yet confirmed")
    }).pipe(Effect.withSpan("SignatureStatus.read"))
}

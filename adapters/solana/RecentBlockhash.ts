import { Effect, Redacted } from "effect"
import type { RecentBlockhash } from "../../ports/Chains.js"

export type { RecentBlockhash }

const BASE58_HASH = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

interface BlockhashAnswer {
  readonly result?: { readonly value?: { readonly blockhash?: unknown; readonly lastValidBlockHeight?: unknown } }
  readonly error?: unknown
}

/**
 * JSON-RPC `getLatestBlockhash` (commitment `confirmed`) at the server's Solana endpoint, for a browser that
 * may only talk to its own origin. Fails with `rpc_failed` on no answer, an error answer or a malformed one.
 * The URL may hold an API key: no error text is passed on. Plain fetch, as SignatureStatus.
 */
export const makeRecentBlockhash = (url: Redacted.Redacted<string>, options: { readonly timeoutMs: number }) =>
  Effect.tryPromise({
    try: async (signal) => {
      const res = await fetch(Redacted.value(url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getLatestBlockhash", params: [{ commitment: "confirmed" }] }),
        signal
      })
      if (!res.ok) throw new Error("status")
      return (await res.json()) as BlockhashAnswer
    },
    catch: () => "rpc_failed" as const
  }).pipe(
    Effect.timeoutFail({ duration: options.timeoutMs, onTimeout: () => "rpc_failed" as const }),
    Effect.flatMap((answer): Effect.Effect<RecentBlockhash, "rpc_failed"> => {
      const value = answer.result?.value
      const blockhash = value?.blockhash
      const height = value?.lastValidBlockHeight
      if (answer.error !== undefined || typeof blockhash !== "string" || !BASE58_HASH.test(blockhash) || typeof height !== "number" || !Number.isSafeInteger(height) || height < 0) {
        return Effect.fail("rpc_failed" as const)
      }
      return Effect.succeed({ blockhash, lastValidBlockHeight: height })
    }),
    Effect.withSpan("RecentBlockhash.read")
  )
